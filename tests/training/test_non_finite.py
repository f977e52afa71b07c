"""A NaN or infinite loss stops training in one line, keeps the last finite checkpoint and saves nothing from it."""

import os

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from tfbert.training import train
from tfbert.training.non_finite import NonFiniteTrainingError

from .toy_pretrainer import ToyPretrainer, toy_dataset_fn


class NaNFromStep4(ToyPretrainer):
    """The toy pretrainer, whose loss is NaN from the 4th step on (as after a too-large learning rate)."""

    def call(self, inputs, training=False):
        outputs = super().call(inputs, training)
        blow_up = ops.where(self.optimizer.iterations >= 3, float("nan"), 1.0)
        return {name: logits * blow_up for name, logits in outputs.items()}


def test_pretraining_stops_at_the_nan_step_and_keeps_the_last_finite_checkpoint(tmp_path):
    with pytest.raises(NonFiniteTrainingError) as error:
        train(NaNFromStep4, toy_dataset_fn, model_dir=str(tmp_path), steps=7, global_batch_size=8,
              strategy=tf.distribute.get_strategy(), checkpoint_every=3, jit_compile=False, verbose=0)
    assert str(error.value).startswith(f"the loss became NaN at step 4; the last finite checkpoint is "
                                       f"{tmp_path / 'ckpt-3'}, which is kept; nothing was saved from it; lower the "
                                       "learning rate (--learning-rate)")
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-3")
    assert not (tmp_path / "ckpt-6.index").exists() and not (tmp_path / "encoder").exists()


def test_finetuning_on_a_nan_score_saves_no_best_model(tmp_path):
    from tfbert.config import EncoderConfig
    from tfbert.models.encoder import build_encoder
    from tfbert.tasks import SequenceRegressor, finetune, regression_evaluator

    config = EncoderConfig(vocab_size=50, hidden_size=16, num_layers=1, num_heads=2, intermediate_size=16,
                           max_positions=16)
    rng = np.random.default_rng(0)
    features = {"token_ids": rng.integers(1, 50, (8, 8)).astype("int32"), "segment_ids": np.zeros((8, 8), "int32"),
                "padding_mask": np.ones((8, 8), "int32")}
    scores = np.linspace(0, 5, 8).astype("float32")
    scores[5] = np.nan   # one score, as a regression file with a `nan` cell would give without the reader's check
    with pytest.raises(NonFiniteTrainingError, match=r"^the loss became NaN at step 1; no checkpoint was written "):
        finetune(lambda encoder: SequenceRegressor(encoder), build_encoder(config), features, scores,
                 regression_evaluator(features, np.linspace(0, 5, 8)), monitor="spearman_correlation",
                 model_dir=tmp_path / "run", batch_size=8, epochs=2, precision="fp32")
    assert os.listdir(tmp_path / "run") == []
