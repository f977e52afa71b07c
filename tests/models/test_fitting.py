"""tfbert's models build their optimizer before Keras traces the train step (`tfbert.models.fitting`): the step
is traced once instead of twice, and training is the same, weight for weight, as Keras' own lazy build. The
conformance suite counts the traces of every family's pretraining model."""

import keras
import numpy as np
import tensorflow as tf
from conformance.conformance_families import counting_traces
from model_fixtures import tiny_config

from tfbert.tasks import SequenceClassifier


def _classifier():
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    inputs = {"token_ids": rng.integers(1, 120, (4, 16)).astype("int32"), "padding_mask": np.ones((4, 16), "int32"),
              "segment_ids": np.zeros((4, 16), "int32")}
    return SequenceClassifier(tiny_config("bert", num_layers=1).encoder, num_classes=2), inputs, np.array([0, 1, 0, 1])


def _fitted(fit):
    model, inputs, labels = _classifier()
    model.compile(optimizer=keras.optimizers.AdamW(1e-3, gradient_accumulation_steps=2), jit_compile=False)
    traces = counting_traces(model)
    fit(model, tf.data.Dataset.from_tensors((inputs, labels)).repeat(4), verbose=0)
    return model, len(traces)


def test_first_fit_traces_the_train_step_once_and_trains_as_keras_does():
    model, traces = _fitted(lambda model, *args, **kwargs: model.fit(*args, **kwargs))
    keras_model, keras_traces = _fitted(keras.Model.fit)
    # Keras alone traces twice: it makes the optimizer's variables while tracing.
    assert (traces, keras_traces) == (1, 2)
    assert int(model.optimizer.iterations.numpy()) == 2, "four batches, two accumulated in each update"
    ours_and_theirs = zip(model.weights + model.optimizer.variables, keras_model.weights + keras_model.optimizer.variables)
    for ours, theirs in ours_and_theirs:
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs), err_msg=ours.path)


def test_a_model_compiled_again_builds_its_new_optimizer_for_what_is_trainable_now():
    model, inputs, labels = _classifier()
    model.compile(optimizer="adam", jit_compile=False)
    model.fit(inputs, labels, verbose=0)
    model.encoder.trainable = False
    model.compile(optimizer="adam", jit_compile=False)
    frozen = [np.asarray(weight) for weight in model.encoder.weights]
    traces = counting_traces(model)
    model.train_on_batch(inputs, labels)
    assert len(traces) == 1 and len(model.optimizer.variables) == 2 + 2 * len(model.trainable_variables)
    for before, after in zip(frozen, model.encoder.weights):
        np.testing.assert_array_equal(before, np.asarray(after))
