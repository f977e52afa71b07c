"""Sequence classification (GLUE) and regression (STS-B): dropout and a dense layer on the pooled output."""

from __future__ import annotations

import keras
from keras import ops

from tfbert.models.tasks.base import EncoderLike, TaskModel, as_encoder, encoder_inputs, label_tensor, policy_name
from tfbert.models.tasks.layers import pooled_dense_head


@keras.saving.register_keras_serializable(package="tfbert")
class SequenceClassifier(TaskModel):
    """`num_classes`-way classifier of one text or a text pair (GLUE SST-2, MRPC, MNLI, ...).

    Inputs: the encoder's dict (`token_ids`, `segment_ids`, `padding_mask`).
    `pooling` picks the vector the head reads: `"pooler"` (BERT's tanh dense
    on `[CLS]`, the default), `"mean"` (mean of the real tokens; better for
    checkpoints trained as sentence embedders, such as all-MiniLM-L6-v2) or
    `"cls"` (the raw first token).

    Output: `{"logits": [batch, num_classes]}` in float32. Labels for `fit`:
    int class ids `[batch]` (or `{"labels": ...}`). Loss: cross-entropy;
    metrics: `loss`, `accuracy`.

    Example:
        >>> import numpy as np
        >>> from tfbert.config import load_config
        >>> from tfbert.models.encoder import build_encoder
        >>> encoder = build_encoder(load_config("bert_tiny").encoder)
        >>> ids = np.array([[101, 7592, 102, 0], [101, 2088, 2003, 102]])
        >>> features = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": ids > 0}
        >>> model = SequenceClassifier(encoder, num_classes=3)
        >>> tuple(model(features)["logits"].shape)
        (2, 3)
        >>> model.compile(optimizer="adamw")   # then model.fit(features, class_ids)
    """

    def __init__(self, encoder: EncoderLike, num_classes: int = 2, dropout_rate: float | None = None,
                 pooling: str = "pooler", dtype: str | None = None, **kwargs):
        if num_classes < 2:
            raise ValueError(f"num_classes must be at least 2, got {num_classes}; use SequenceRegressor for scores")
        encoder = as_encoder(encoder, dtype)
        policy = policy_name(encoder, dtype)
        inputs = encoder_inputs(encoder)
        logits = pooled_dense_head(encoder, inputs, num_classes, dropout_rate, pooling, policy, "classifier")
        super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
        self._remember(encoder, {"num_classes": num_classes, "dropout_rate": dropout_rate, "pooling": pooling}, dtype)
        self._track("accuracy")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        labels = ops.cast(label_tensor(y), "int32")
        losses = keras.losses.sparse_categorical_crossentropy(labels, y_pred["logits"], from_logits=True)
        if sample_weight is not None:
            weights = ops.cast(sample_weight, "float32")
            return ops.sum(losses * weights) / ops.maximum(ops.sum(weights), 1e-12)
        return ops.mean(losses)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        labels = ops.cast(label_tensor(y), "int32")
        hits = ops.cast(ops.equal(ops.cast(ops.argmax(y_pred["logits"], axis=-1), "int32"), labels), "float32")
        return self._update_trackers({"accuracy": ops.mean(hits)}, ops.size(hits))


@keras.saving.register_keras_serializable(package="tfbert")
class SequenceRegressor(TaskModel):
    """One real-valued score per text or text pair (GLUE STS-B).

    Output: `{"score": [batch]}` in float32; labels: float scores `[batch]`.
    `pooling` as for `SequenceClassifier`.
    Loss: mean squared error; metrics: `loss`, `mean_absolute_error`.

    Example:
        >>> from tfbert.config import load_config
        >>> from tfbert.models.encoder import build_encoder
        >>> from tfbert.finetuning.features import encode_texts
        >>> from tfbert.text import WordPieceTokenizer
        >>> pairs = encode_texts(WordPieceTokenizer("vocab.txt"), ["a man plays", "a cat sleeps"],
        ...                      ["a man is playing", "a dog runs"], max_length=16)
        >>> model = SequenceRegressor(build_encoder(load_config("bert_tiny").encoder))
        >>> tuple(model(pairs)["score"].shape)     # then model.fit(pairs, scores)
        (2,)
    """

    def __init__(self, encoder: EncoderLike, dropout_rate: float | None = None, pooling: str = "pooler",
                 dtype: str | None = None, **kwargs):
        encoder = as_encoder(encoder, dtype)
        policy = policy_name(encoder, dtype)
        inputs = encoder_inputs(encoder)
        score = pooled_dense_head(encoder, inputs, 1, dropout_rate, pooling, policy, "regressor")[:, 0]
        super().__init__(inputs=inputs, outputs={"score": score}, **kwargs)
        self._remember(encoder, {"dropout_rate": dropout_rate, "pooling": pooling}, dtype)
        self._track("mean_absolute_error")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        errors = ops.square(y_pred["score"] - ops.cast(label_tensor(y), "float32"))
        if sample_weight is not None:
            weights = ops.cast(sample_weight, "float32")
            return ops.sum(errors * weights) / ops.maximum(ops.sum(weights), 1e-12)
        return ops.mean(errors)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        error = ops.mean(ops.abs(y_pred["score"] - ops.cast(label_tensor(y), "float32")))
        return self._update_trackers({"mean_absolute_error": error}, ops.size(y_pred["score"]))
