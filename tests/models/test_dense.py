"""tfbert's Dense: Keras' Dense, computed on the input flattened to a matrix (same outputs, names and gradients)."""

import keras
import numpy as np
import tensorflow as tf
from model_fixtures import run_on_backend

from tfbert.models.dense import Dense, matmul_rows

RNG = np.random.default_rng(0)


def twin_layers(units, inputs):
    """A tfbert Dense and a Keras Dense with the same weights, built for `inputs`."""
    ours, theirs = Dense(units, name="intermediate"), keras.layers.Dense(units, name="intermediate")
    ours.build(inputs.shape)
    theirs.build(inputs.shape)
    theirs.set_weights([RNG.normal(size=w.shape).astype("float32") for w in theirs.get_weights()])
    ours.set_weights(theirs.get_weights())
    return ours, theirs


def test_outputs_and_variable_names_equal_keras_dense_at_every_rank():
    for shape in [(3, 4), (2, 5, 4), (2, 3, 5, 4)]:
        inputs = RNG.normal(size=shape).astype("float32")
        ours, theirs = twin_layers(6, inputs)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(ours(inputs)),
                                   keras.ops.convert_to_numpy(theirs(inputs)), rtol=1e-6, atol=1e-6)
        assert [v.path for v in ours.weights] == [v.path for v in theirs.weights]


def test_unknown_leading_dimensions_in_a_graph():
    layer = Dense(3)
    layer.build((None, None, 4))
    traced = tf.function(layer, input_signature=[tf.TensorSpec((None, None, 4), tf.float32)])
    assert tuple(traced(tf.ones((2, 7, 4))).shape) == (2, 7, 3)
    assert traced.get_concrete_function().structured_outputs.shape.as_list() == [None, None, 3]


def test_matmul_rows_is_matmul():
    inputs, matrix = RNG.normal(size=(2, 5, 4)).astype("float32"), RNG.normal(size=(4, 3)).astype("float32")
    np.testing.assert_allclose(keras.ops.convert_to_numpy(matmul_rows(inputs, matrix)), inputs @ matrix, rtol=1e-5)


def test_gradients_on_jax_equal_keras_dense():
    script = """
import jax, keras, numpy as np
from tfbert.models.dense import Dense
x = np.random.default_rng(1).normal(size=(2, 8, 16)).astype("float32")
ours, theirs = Dense(32), keras.layers.Dense(32)
ours.build(x.shape); theirs.build(x.shape); ours.set_weights(theirs.get_weights())
def grads(layer):
    loss = lambda w, x: (layer.stateless_call(w, [], x)[0] ** 2).sum()
    return jax.jit(jax.grad(loss, argnums=(0, 1)))([v.value for v in layer.trainable_variables], x)
close = all(np.allclose(a, b, rtol=1e-5, atol=1e-5) for a, b in zip(jax.tree.leaves(grads(ours)),
                                                                     jax.tree.leaves(grads(theirs))))
print("equal" if close else "differ")
"""
    assert run_on_backend("jax", script) == "equal"
