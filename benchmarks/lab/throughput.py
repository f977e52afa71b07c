"""What the training-throughput tables share: the batch, tfbert's train step, its matmul FLOPs.

Imports no TensorFlow, so the JAX table (`training_jax`) runs where only JAX is installed.

Example:
    >>> batch = make_batch(vocab_size=100, batch_size=2)
    >>> batch["token_ids"].shape, batch["masked_positions"].shape
    ((2, 128), (2, 20))
"""

from __future__ import annotations

import keras
import numpy as np

from tfbert.config import load_config
from tfbert.models.pretraining import PretrainingModel

LENGTH = 128
PREDICTIONS = 20


def make_batch(vocab_size: int, batch_size: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random token ids, two segments, no padding, `PREDICTIONS` sorted masked positions and labels."""
    rng = np.random.default_rng(seed)
    positions = np.sort(np.stack([rng.choice(np.arange(1, LENGTH), PREDICTIONS, replace=False)
                                  for _ in range(batch_size)]), axis=1).astype("int32")
    return {
        "token_ids": rng.integers(5, vocab_size, (batch_size, LENGTH)).astype("int32"),
        "segment_ids": (np.arange(LENGTH)[None, :] >= LENGTH // 2).repeat(batch_size, 0).astype("int32"),
        "padding_mask": np.ones((batch_size, LENGTH), "int32"),
        "masked_positions": positions,
        "masked_ids": rng.integers(5, vocab_size, (batch_size, PREDICTIONS)).astype("int32"),
        "masked_weights": np.ones((batch_size, PREDICTIONS), "float32"),
        "pair_labels": rng.integers(0, 2, batch_size).astype("int32"),
    }


def tfbert_step(config_name: str, batch: dict[str, np.ndarray], jit_compile: bool = True):
    """A call that runs one train step (MLM + NSP/SOP, Adam; XLA-compiled by default) of `config_name`'s model on
    `batch`."""
    model = PretrainingModel(load_config(config_name))
    model.compile(optimizer=keras.optimizers.Adam(1e-4), jit_compile=jit_compile)
    inputs = {name: batch[name] for name in ("token_ids", "segment_ids", "padding_mask", "masked_positions")}
    labels = {"masked_ids": batch["masked_ids"], "masked_weights": batch["masked_weights"],
              f"{model.pair_objective}_labels": batch["pair_labels"]}
    return lambda: model.train_on_batch(inputs, labels)


def matmul_flops(config_name: str, batch_size: int, framework: str) -> float:
    """Matmul FLOPs of one training step (forward x 3): the encoder's dense layers and attention, the MLM head."""
    encoder = load_config(config_name).encoder
    hidden, inner = encoder.hidden_size, encoder.intermediate_size
    embedding = encoder.embedding_size or hidden
    fused_projection = 3 * hidden * hidden  # queries, keys and values, at every position of every layer
    # Per query position: the output projection, the feed-forward, the scores and the weighted values.
    per_query = hidden * hidden + 2 * hidden * inner + 2 * LENGTH * hidden
    last_layer_queries = PREDICTIONS + 1 if framework == "tfbert" else LENGTH
    encoder_macs = (LENGTH * encoder.num_layers * fused_projection
                    + (LENGTH * (encoder.num_layers - 1) + last_layer_queries) * per_query)
    encoder_macs += LENGTH * hidden * embedding if embedding != hidden else 0
    head_positions = LENGTH if framework == "hf" else PREDICTIONS
    head_macs = head_positions * (hidden * embedding + embedding * encoder.vocab_size)
    return 3 * 2 * batch_size * (encoder_macs + head_macs)
