"""Optimizer recipes: schedule, weight-decay exclusion, clipping, gradient accumulation."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tfbert.training import RECIPES, WarmupLinearDecay, create_optimizer

from .toy_pretrainer import ToyPretrainer, toy_dataset_fn


def test_schedule_values_at_start_warmup_peak_and_end():
    schedule = WarmupLinearDecay(1e-4, warmup_steps=10_000, total_steps=110_000)
    values = {step: float(schedule(step)) for step in (0, 5_000, 10_000, 60_000, 110_000, 200_000)}
    assert values[0] == 0.0
    assert values[5_000] == pytest.approx(5e-5, rel=1e-6)
    assert values[10_000] == pytest.approx(1e-4, rel=1e-6)
    assert values[60_000] == pytest.approx(5e-5, rel=1e-6)
    assert values[110_000] == 0.0 and values[200_000] == 0.0


def test_schedule_round_trips_through_keras_serialization():
    schedule = WarmupLinearDecay(2e-5, warmup_steps=3, total_steps=30)
    restored = keras.optimizers.schedules.deserialize(keras.optimizers.schedules.serialize(schedule))
    assert isinstance(restored, WarmupLinearDecay)
    assert restored.get_config() == schedule.get_config()
    optimizer = create_optimizer("finetune", 30)
    clone = type(optimizer).from_config(optimizer.get_config())
    assert float(clone.learning_rate) == 0.0 and clone.global_clipnorm == 1.0


@pytest.mark.parametrize(
    "recipe, algorithm, peak, warmup, beta_2",
    [
        ("bert", keras.optimizers.AdamW, 1e-4, 10_000, 0.999),
        ("roberta", keras.optimizers.AdamW, 6e-4, 24_000, 0.98),
        ("albert", keras.optimizers.Lamb, 0.00176, 3_125, 0.999),
        ("electra", keras.optimizers.AdamW, 5e-4, 10_000, 0.999),
        ("electra-base", keras.optimizers.AdamW, 2e-4, 10_000, 0.999),
        ("finetune", keras.optimizers.AdamW, 2e-5, 10_000, 0.999),  # 10% of 100,000
    ],
)
def test_recipes(recipe, algorithm, peak, warmup, beta_2):
    optimizer = create_optimizer(recipe, total_steps=100_000)
    schedule = optimizer._learning_rate
    assert isinstance(optimizer, algorithm)
    assert (schedule.peak_learning_rate, schedule.warmup_steps, schedule.total_steps) == (peak, warmup, 100_000)
    assert float(schedule(100_000)) == 0.0
    assert optimizer.weight_decay == 0.01 and optimizer.epsilon == 1e-6
    assert optimizer.beta_2 == beta_2 and optimizer.global_clipnorm == 1.0


def test_unknown_recipe_is_rejected():
    with pytest.raises(ValueError, match="Unknown optimizer recipe 'gpt'"):
        create_optimizer("gpt", 10)
    assert set(RECIPES) >= {"bert", "roberta", "albert", "electra", "finetune"}


def _layer_variables():
    dense = keras.layers.Dense(3, name="encoder_dense")
    norm = keras.layers.LayerNormalization(name="encoder_layer_norm")
    embedding = keras.layers.Embedding(5, 3, name="token_embedding")
    dense.build((None, 3))
    norm.build((None, 3))
    embedding.build((None,))
    for variable in [*dense.weights, *norm.weights, *embedding.weights]:
        variable.assign(np.full(variable.shape, 2.0, "float32"))
    return {
        "kernel": dense.kernel,
        "bias": dense.bias,
        "gamma": norm.gamma,
        "beta": norm.beta,
        "embeddings": embedding.embeddings,
        "output_bias": keras.Variable(np.full(5, 2.0, "float32"), name="output_bias"),  # the MLM heads' bias
    }


def test_weight_decay_skips_layer_norm_and_biases_and_decays_kernels():
    variables = _layer_variables()
    assert variables["gamma"].path == "encoder_layer_norm/gamma"  # Keras matches .name, not .path
    optimizer = create_optimizer("bert", 100, learning_rate=0.5, warmup_steps=0, weight_decay=0.1, clipnorm=None)
    zero_gradients = [tf.zeros_like(v) for v in variables.values()]
    optimizer.apply_gradients(zip(zero_gradients, variables.values()))
    # Zero gradients: Adam moves nothing, only the decoupled decay w <- w - lr * wd * w acts.
    decayed = 2.0 - 0.5 * 0.1 * 2.0
    for name in ("kernel", "embeddings"):
        np.testing.assert_allclose(variables[name].numpy(), decayed, rtol=1e-6, err_msg=name)
    for name in ("bias", "gamma", "beta", "output_bias"):
        np.testing.assert_array_equal(variables[name].numpy(), 2.0, err_msg=name)


def test_clipping_uses_the_global_norm():
    variable = keras.Variable(np.zeros(4, "float32"), name="kernel")
    optimizer = create_optimizer("bert", 10, clipnorm=1.0)
    gradient = tf.constant([3.0, 4.0, 0.0, 0.0])
    clipped = optimizer._clip_gradients([gradient])[0]
    np.testing.assert_allclose(clipped.numpy(), [0.6, 0.8, 0.0, 0.0], rtol=1e-6)
    assert create_optimizer("bert", 10, clipnorm=None).global_clipnorm is None
    del variable


def test_keras_adam_squares_sparse_gradient_slices_and_dense_gradients_fixes_it():
    """A row looked up twice: Keras' sparse path keeps g1**2 + g2**2 in v, the dense one (g1 + g2)**2."""
    gradient = tf.IndexedSlices(tf.constant([[1.0], [1.0]]), tf.constant([0, 0]), tf.constant([3, 1]))
    velocities = {}
    for name, optimizer in [("keras", keras.optimizers.Adam(0.1)), ("tfbert", create_optimizer("bert", 10, clipnorm=None))]:
        variable = keras.Variable(np.zeros((3, 1), "float32"), name="embeddings")
        optimizer.build([variable])
        optimizer.apply_gradients([(gradient, variable)])
        velocities[name] = [v for v in optimizer.variables if "velocity" in v.path][0].numpy()[0, 0]
    assert velocities["keras"] == pytest.approx(0.001 * 2.0)
    assert velocities["tfbert"] == pytest.approx(0.001 * 4.0)


def _train_weights(global_batch, steps, accumulation, jit_compile):
    keras.utils.set_random_seed(7)
    model = ToyPretrainer()
    optimizer = create_optimizer(
        "bert", total_steps=4, warmup_steps=1, learning_rate=1e-2, gradient_accumulation_steps=accumulation
    )
    model.compile(optimizer=optimizer, jit_compile=jit_compile)
    model.fit(toy_dataset_fn(global_batch), steps_per_epoch=steps, epochs=1, verbose=0, shuffle=False)
    return model, [w.numpy() for w in model.weights]


def test_gradient_accumulation_matches_one_big_batch_under_xla():
    """Two micro-batches of 8 accumulated == one batch of 16 (losses are means over equal counts)."""
    big, big_weights = _train_weights(16, steps=3, accumulation=None, jit_compile=True)
    small, small_weights = _train_weights(8, steps=6, accumulation=2, jit_compile=True)
    assert int(big.optimizer.iterations.numpy()) == int(small.optimizer.iterations.numpy()) == 3
    for expected, actual in zip(big_weights, small_weights):
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-6)
