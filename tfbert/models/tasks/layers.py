"""What the task heads share: pooling, the pooled dense head, span-logit masking and the choice reshapes."""

from __future__ import annotations

import keras
from keras import ops

from tfbert.models.dropout import Dropout
from tfbert.models.initializers import truncated_normal

# sentence-transformers' names (its `Pooling.POOLING_MODES`), so its folders' pooling passes through unchanged.
POOLING_MODES = ("mean", "cls", "max", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")
HEAD_POOLING = ("pooler", *POOLING_MODES)
# Added to the logits of padding positions: far below any real logit, still finite in float32.
NEGATIVE_LOGIT = -1e9


@keras.saving.register_keras_serializable(package="tfbert")
class Pooling(keras.layers.Layer):
    """One vector per sequence: the mean over real tokens (`"mean"`, Sentence-BERT), the first token (`"cls"`),
    the element-wise maximum over real tokens (`"max"`), the sum over real tokens divided by the square root
    of their count (`"mean_sqrt_len_tokens"`), the mean weighted by position 1, 2, ... (`"weightedmean"`) or
    the last real token (`"lasttoken"`), as sentence-transformers' `Pooling` computes them (inputs padded
    on the right).

    Example:
        >>> sequence_output, padding_mask = keras.random.normal((2, 16, 128)), ops.ones((2, 16), "int32")
        >>> tuple(Pooling("mean")(sequence_output, padding_mask).shape)   # [batch, hidden], float32
        (2, 128)
    """

    def __init__(self, mode: str = "mean", **kwargs):
        if mode not in POOLING_MODES:
            raise ValueError(f"unknown pooling {mode!r}; expected one of {', '.join(POOLING_MODES)}")
        super().__init__(**kwargs)
        self.mode = mode

    def call(self, sequence, padding_mask):
        sequence = ops.cast(sequence, "float32")
        if self.mode == "cls":
            return sequence[:, 0, :]
        if self.mode == "max":
            keep = ops.expand_dims(ops.cast(padding_mask, "bool"), -1)
            return ops.max(ops.where(keep, sequence, NEGATIVE_LOGIT), axis=1)
        # expand_dims, not [:, :, None]: TensorFlow Lite converts it at open shapes (tests/models/test_tflite_conversion.py)
        weights = ops.expand_dims(ops.cast(padding_mask, "float32"), -1)
        if self.mode == "lasttoken":
            last = ops.maximum(ops.cast(ops.sum(weights, axis=1), "int32") - 1, 0)
            return ops.take_along_axis(sequence, ops.expand_dims(last, -1), axis=1)[:, 0, :]
        if self.mode == "weightedmean":
            weights = weights * ops.reshape(ops.arange(1, ops.shape(sequence)[1] + 1, dtype="float32"), (1, -1, 1))
        total = ops.sum(sequence * weights, axis=1)
        count = ops.maximum(ops.sum(weights, axis=1), 1e-9)
        return total / (ops.sqrt(count) if self.mode == "mean_sqrt_len_tokens" else count)

    def compute_output_shape(self, sequence_shape, padding_mask_shape):
        return (sequence_shape[0], sequence_shape[2])

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


@keras.saving.register_keras_serializable(package="tfbert")
class MaskPadding(keras.layers.Layer):
    """float32 logits `[batch, length]` with padding positions set to a very negative value."""

    def call(self, logits, padding_mask):
        keep = ops.cast(padding_mask, "bool")
        return ops.where(keep, ops.cast(logits, "float32"), NEGATIVE_LOGIT)

    def compute_output_shape(self, logits_shape, padding_mask_shape):
        return logits_shape


@keras.saving.register_keras_serializable(package="tfbert")
class MergeChoices(keras.layers.Layer):
    """`[batch, choices, length]` -> `[batch * choices, length]`, so every choice goes through the encoder alone."""

    def call(self, ids):
        return ops.reshape(ids, (-1, ops.shape(ids)[-1]))

    def compute_output_shape(self, shape):
        rows = None if shape[0] is None or shape[1] is None else shape[0] * shape[1]
        return (rows, shape[2])


@keras.saving.register_keras_serializable(package="tfbert")
class SplitChoices(keras.layers.Layer):
    """Per-choice scores `[batch * choices, 1]` back to float32 logits `[batch, choices]`."""

    def call(self, scores, ids):
        return ops.reshape(ops.cast(scores, "float32"), (-1, ops.shape(ids)[1]))

    def compute_output_shape(self, scores_shape, ids_shape):
        return (ids_shape[0], ids_shape[1])


def pooled_dense_head(encoder, inputs: dict, units: int, dropout_rate: float | None, pooling: str, policy, name: str):
    """Dropout + dense on one vector per text: BERT's pooler output (`"pooler"`), the token mean or the first token.

    `dropout_rate=None` takes the encoder's; the result is float32.

    Example:
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
        >>> encoder = load_pretrained_encoder("runs/bert")
        >>> inputs = {name: keras.Input((16,), dtype="int32", name=name) for name in ("token_ids", "segment_ids", "padding_mask")}
        >>> logits = pooled_dense_head(encoder, inputs, 3, None, "pooler", "float32", "classifier")
        >>> tuple(logits.shape)
        (None, 3)
    """
    if pooling not in HEAD_POOLING:
        raise ValueError(f"unknown pooling {pooling!r}; expected one of {', '.join(HEAD_POOLING)}")
    outputs = encoder(inputs)
    if pooling == "pooler":
        pooled = outputs["pooled_output"]
    else:
        pooled = Pooling(pooling, name="pooling")(outputs["sequence_output"], inputs["padding_mask"])
    rate = encoder.config.dropout_rate if dropout_rate is None else dropout_rate
    pooled = Dropout(rate, dtype=policy, name="head_dropout")(pooled)
    dense = keras.layers.Dense(
        units, kernel_initializer=truncated_normal(encoder.config.initializer_range), dtype=policy, name=name
    )
    return ops.cast(dense(pooled), "float32")
