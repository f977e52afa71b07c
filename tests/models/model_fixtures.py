"""Small configs and batches shared by the model tests, and running a script on another Keras backend."""

import os
import subprocess
import sys

import numpy as np
import pytest

from tfbert.config import EncoderConfig, ModelConfig


def tiny_config(architecture: str = "albert", **changes) -> ModelConfig:
    fields = dict(vocab_size=120, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=48, max_positions=64)
    if architecture == "albert":
        fields.update(embedding_size=16, sharing="all")
    fields.update(changes)
    return ModelConfig(architecture=architecture, encoder=EncoderConfig(**fields))


def pretraining_batch(config: ModelConfig, batch: int = 4, length: int = 16, predictions: int = 3, seed: int = 0):
    """(inputs, labels) with right padding, two segments and masked positions inside the real tokens."""
    rng = np.random.default_rng(seed)
    vocab = config.encoder.vocab_size
    lengths = rng.integers(predictions + 2, length + 1, size=batch)
    mask = (np.arange(length)[None, :] < lengths[:, None]).astype("int32")
    inputs = {
        "token_ids": (rng.integers(1, vocab, size=(batch, length)) * mask).astype("int32"),
        "segment_ids": ((np.arange(length)[None, :] >= lengths[:, None] // 2) * mask).astype("int32"),
        "padding_mask": mask,
        "masked_positions": np.stack([rng.choice(np.arange(1, n), predictions, replace=False) for n in lengths]).astype("int32"),
    }
    labels = {
        "masked_ids": rng.integers(1, vocab, size=(batch, predictions)).astype("int32"),
        "masked_weights": np.ones((batch, predictions), "float32"),
    }
    pair = {"bert": "nsp_labels", "albert": "sop_labels"}.get(config.architecture)
    if pair:
        labels[pair] = rng.integers(0, 2, size=batch).astype("int32")
    return inputs, labels


def run_on_backend(backend: str, script: str) -> str:
    """Runs `script` in a fresh process with `KERAS_BACKEND=backend` and returns its last line of output."""
    pytest.importorskip(backend)
    env = {**os.environ, "KERAS_BACKEND": backend}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]
