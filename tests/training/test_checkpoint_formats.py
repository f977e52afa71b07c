"""The two checkpoint formats of a run folder: TensorFlow's (`ckpt-N.index`) and Keras weights files
(`ckpt-N.weights.h5`, the JAX trainer's). Readers take the newest of either; each trainer resumes from it."""

import keras
import numpy as np
import pytest

from tfbert.artifacts.checkpoints import newest_checkpoint
from tfbert.training.checkpointing import KerasWeightsCheckpoint, TrainingCheckpoint


def compiled_model(seed: int) -> keras.Model:
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.AdamW(1e-2), loss="mse")
    model.optimizer.build(model.trainable_variables)
    return model


def trained(model: keras.Model, steps: int) -> keras.Model:
    model.fit(np.ones((steps * 2, 3)), np.zeros((steps * 2, 2)), batch_size=2, verbose=0)
    return model


def test_keras_checkpoints_restore_model_and_optimizer_and_keep_the_newest(tmp_path):
    model = trained(compiled_model(0), 3)
    state = KerasWeightsCheckpoint(str(tmp_path), model, max_to_keep=2)
    for step in (1, 2, 3):
        state.save(step)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ckpt-2.weights.h5", "ckpt-3.weights.h5"]
    fresh = compiled_model(1)
    assert KerasWeightsCheckpoint(str(tmp_path), fresh).restore() == 3
    np.testing.assert_array_equal(fresh.get_weights()[0], model.get_weights()[0])
    assert int(fresh.optimizer.iterations) == 3
    for restored, saved in zip(fresh.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(restored), np.asarray(saved))


def test_a_tensorflow_trainer_resumes_from_a_newer_keras_checkpoint(tmp_path):
    older = trained(compiled_model(0), 1)
    TrainingCheckpoint(str(tmp_path), older, older.optimizer).save(1)
    newer = trained(compiled_model(2), 4)
    KerasWeightsCheckpoint(str(tmp_path), newer).save(4)
    assert (newest_checkpoint(tmp_path).step, newest_checkpoint(tmp_path).format) == (4, "keras")
    resumed = compiled_model(3)
    state = TrainingCheckpoint(str(tmp_path), resumed, resumed.optimizer)
    assert state.restore() == 4 and int(state.step.numpy()) == 4
    np.testing.assert_array_equal(resumed.get_weights()[0], newer.get_weights()[0])


def test_the_keras_trainer_refuses_a_newer_tensorflow_checkpoint_and_names_the_way_out(tmp_path):
    model = trained(compiled_model(0), 2)
    KerasWeightsCheckpoint(str(tmp_path), model).save(1)
    TrainingCheckpoint(str(tmp_path), model, model.optimizer).save(2)
    with pytest.raises(ValueError, match="--backend tensorflow.*--init-from"):
        KerasWeightsCheckpoint(str(tmp_path), compiled_model(1)).restore()


def test_a_folder_without_checkpoints_has_none(tmp_path):
    assert newest_checkpoint(tmp_path) is None
    assert newest_checkpoint(tmp_path / "missing") is None
    (tmp_path / ".tfbert-tmp-1-ckpt-5.weights.h5").write_bytes(b"half")   # a write a kill interrupted
    assert newest_checkpoint(tmp_path) is None
