"""A tiny pretraining model in the shape of tfbert's pretrainers, and its data.

Like the real models it takes a dict of int32 features, returns a dict of
logits, computes its masked MLM loss and NSP loss itself in `compute_loss`
(y is None) and tracks its metrics. The MLM mask is a *boolean* tensor
derived from `masked_weights`; it is cast to float before it reaches a
reduction or a metric (see `float_mask`), which is the contract that keeps
bool tensors out of anything aggregated across replicas.
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf
from keras import ops

VOCAB_SIZE = 32
SEQUENCE_LENGTH = 8
MAX_PREDICTIONS = 3
PREDICTIONS_PER_EXAMPLE = 2


def float_mask(masked_weights, dtype="float32"):
    """Boolean mask of real predictions, then as `dtype` for reductions and metrics."""
    is_real = ops.greater(masked_weights, 0)
    return ops.cast(is_real, dtype)


class ToyPretrainer(keras.Model):
    def __init__(self, vocab_size=VOCAB_SIZE, hidden_size=8, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.token_embedding = keras.layers.Embedding(vocab_size, hidden_size, name="token_embedding")
        self.embedding_norm = keras.layers.LayerNormalization(name="embedding_norm")
        self.dropout = keras.layers.Dropout(dropout)
        self.transform = keras.layers.Dense(hidden_size, activation="gelu", name="transform")
        self.mlm_head = keras.layers.Dense(vocab_size, name="mlm_head")
        self.nsp_head = keras.layers.Dense(2, name="nsp_head")
        self.mlm_loss_tracker = keras.metrics.Mean(name="mlm_loss")
        self.mlm_accuracy = keras.metrics.SparseCategoricalAccuracy(name="mlm_accuracy")
        self.nsp_loss_tracker = keras.metrics.Mean(name="nsp_loss")
        self.nsp_accuracy = keras.metrics.SparseCategoricalAccuracy(name="nsp_accuracy")
        self.encoder_saved_to = None

    def call(self, inputs, training=False):
        hidden = self.token_embedding(inputs["token_ids"])
        hidden = self.dropout(self.embedding_norm(hidden), training=training)
        hidden = self.transform(hidden)
        gathered = ops.take_along_axis(hidden, inputs["masked_positions"][..., None], axis=1)
        return {"mlm_logits": self.mlm_head(gathered), "nsp_logits": self.nsp_head(hidden[:, 0])}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        mlm_logits = ops.cast(y_pred["mlm_logits"], "float32")
        nsp_logits = ops.cast(y_pred["nsp_logits"], "float32")
        weights = float_mask(x["masked_weights"])
        per_prediction = keras.losses.sparse_categorical_crossentropy(
            x["masked_ids"], mlm_logits, from_logits=True
        )
        mlm_loss = ops.sum(per_prediction * weights) / ops.maximum(ops.sum(weights), 1.0)
        nsp_loss = ops.mean(
            keras.losses.sparse_categorical_crossentropy(x["nsp_labels"], nsp_logits, from_logits=True)
        )
        self.mlm_loss_tracker.update_state(mlm_loss)
        self.mlm_accuracy.update_state(x["masked_ids"], mlm_logits, sample_weight=weights)
        self.nsp_loss_tracker.update_state(nsp_loss)
        self.nsp_accuracy.update_state(x["nsp_labels"], nsp_logits)
        return mlm_loss + nsp_loss

    @property
    def metrics(self):
        return [self.mlm_loss_tracker, self.mlm_accuracy, self.nsp_loss_tracker, self.nsp_accuracy]

    def save_encoder(self, path):
        self.encoder_saved_to = path
        tf.io.gfile.makedirs(path)
        np.save(f"{path}/token_embedding.npy", ops.convert_to_numpy(self.token_embedding.embeddings))


def toy_examples(count=256, seed=0):
    """Deterministic features; every example has exactly PREDICTIONS_PER_EXAMPLE real predictions."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((count, MAX_PREDICTIONS), "int32")
    weights[:, :PREDICTIONS_PER_EXAMPLE] = 1
    return {
        "token_ids": rng.integers(1, VOCAB_SIZE, (count, SEQUENCE_LENGTH)).astype("int32"),
        "segment_ids": np.zeros((count, SEQUENCE_LENGTH), "int32"),
        "padding_mask": np.ones((count, SEQUENCE_LENGTH), "int32"),
        "masked_positions": rng.integers(0, SEQUENCE_LENGTH, (count, MAX_PREDICTIONS)).astype("int32"),
        "masked_ids": rng.integers(0, VOCAB_SIZE, (count, MAX_PREDICTIONS)).astype("int32"),
        "masked_weights": weights,
        "nsp_labels": rng.integers(0, 2, (count,)).astype("int32"),
    }


def toy_dataset_fn(batch_size, input_context=None, count=256):
    """`dataset_fn` for `tfbert.training.train`: sharded, repeated, static batches.

    `padding_mask` is a bool feature here on purpose: Keras 3.15 averages the
    first batch across replicas in `fit` (AddN on bool under MirroredStrategy),
    which the driver must avoid.
    """
    examples = toy_examples(count)
    examples["padding_mask"] = examples["padding_mask"].astype(bool)
    dataset = tf.data.Dataset.from_tensor_slices(examples)
    if input_context is not None and input_context.num_input_pipelines > 1:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    return dataset.repeat().batch(batch_size, drop_remainder=True)
