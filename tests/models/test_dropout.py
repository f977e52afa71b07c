"""tfbert's Dropout: Keras's semantics (rate, scaling, seeds, serialization), a mask from an integer hash."""

import keras
import numpy as np
import pytest
from model_fixtures import run_on_backend

from tfbert.models.dropout import Dropout, hashed_keep_mask

SHAPE = (16, 4, 64, 64)


def draws(layer, count):
    ones = np.ones(SHAPE, "float32")
    return [keras.ops.convert_to_numpy(layer(ones, training=True)) for _ in range(count)]


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_rate_scaling_and_independent_draws(rate):
    first, second = draws(Dropout(rate, seed=7), 2)
    assert set(np.unique(first)) == {0.0, np.float32(1 / (1 - rate))}
    kept = first != 0
    sigma = np.sqrt(rate * (1 - rate) / kept.size)
    assert abs(kept.mean() - (1 - rate)) < 5 * sigma
    # Independent Bernoulli masks: two calls agree on (1-r)^2 + r^2 of the elements; neighbours are uncorrelated.
    agreement = (kept == (second != 0)).mean()
    assert abs(agreement - ((1 - rate) ** 2 + rate**2)) < 0.01
    flat = kept.reshape(-1).astype("float32")
    for lag in (1, 64, 4096):
        assert abs(np.corrcoef(flat[:-lag], flat[lag:])[0, 1]) < 0.01


def test_same_seed_same_masks_and_inference_is_the_identity():
    assert all(np.array_equal(a, b) for a, b in zip(draws(Dropout(0.1, seed=3), 3), draws(Dropout(0.1, seed=3), 3)))
    assert not np.array_equal(draws(Dropout(0.1, seed=3), 1)[0], draws(Dropout(0.1, seed=4), 1)[0])
    inputs = np.random.default_rng(0).normal(size=(3, 5)).astype("float32")
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(Dropout(0.3)(inputs, training=False)), inputs)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(Dropout(0.0)(inputs, training=True)), inputs)


def test_noise_shape_falls_back_to_keras():
    out = keras.ops.convert_to_numpy(Dropout(0.5, noise_shape=(16, 1, 1, 64), seed=1)(np.ones(SHAPE, "float32"),
                                                                                           training=True))
    assert np.array_equal(out[:, :1, :1], np.broadcast_to(out[:, :1, :1], out[:, :1, :1].shape))
    assert np.all(out == out[:, :1, :1])


def test_saved_in_a_functional_model(tmp_path):
    inputs = keras.Input((8,))
    model = keras.Model(inputs, keras.layers.Dense(2)(Dropout(0.2, seed=5)(inputs)))
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    layer = loaded.layers[1]
    assert type(layer) is Dropout and layer.rate == 0.2 and layer.seed == 5


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_masks_are_the_same_on_other_backends(backend):
    script = ("import numpy as np, keras; from tfbert.models.dropout import hashed_keep_mask; "
              "m = keras.ops.convert_to_numpy(hashed_keep_mask((3, 5, 7), np.array([11, -2]), 0.25)); "
              "print(''.join('1' if v else '0' for v in m.ravel()))")
    here = keras.ops.convert_to_numpy(hashed_keep_mask((3, 5, 7), np.array([11, -2]), 0.25))
    assert run_on_backend(backend, script) == "".join("1" if v else "0" for v in here.ravel())
