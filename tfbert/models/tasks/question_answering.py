"""Extractive question answering (SQuAD 1.1 and 2.0): start and end logits over the tokens."""

from __future__ import annotations

import keras
from keras import ops

from tfbert.models.initializers import truncated_normal
from tfbert.models.tasks.base import EncoderLike, TaskModel, as_encoder, encoder_inputs, policy_name
from tfbert.models.tasks.layers import MaskPadding


@keras.saving.register_keras_serializable(package="tfbert")
class SpanExtractor(TaskModel):
    """Predicts where the answer starts and ends in `[CLS] question [SEP] context [SEP]`.

    Outputs: `start_logits` and `end_logits` `[batch, length]`, float32, with
    padding positions at -1e9. Labels for `fit`: `{"start_positions": [batch],
    "end_positions": [batch]}`; an unanswerable window (SQuAD 2.0, or a window
    that does not contain the answer) points both at position 0, the `[CLS]`
    token. Loss: the mean of the start and end cross-entropies; metrics:
    `loss`, `start_accuracy`, `end_accuracy`. Decode predictions with
    `tfbert.finetuning.question_answering.decode_answers`.

    Example:
        >>> import numpy as np
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
        >>> model = SpanExtractor(load_pretrained_encoder("runs/bert"))
        >>> features = {"token_ids": np.full((2, 16), 7592), "padding_mask": np.ones((2, 16), "int32"),
        ...             "segment_ids": np.zeros((2, 16), "int32")}
        >>> logits = model(features)    # model.fit(features, {"start_positions": ..., "end_positions": ...}) trains it
        >>> tuple(logits["start_logits"].shape), tuple(logits["end_logits"].shape)
        ((2, 16), (2, 16))
    """

    def __init__(self, encoder: EncoderLike, dtype: str | None = None, **kwargs):
        encoder = as_encoder(encoder, dtype)
        policy = policy_name(encoder, dtype)
        inputs = encoder_inputs(encoder)
        sequence = encoder(inputs)["sequence_output"]
        span_logits = keras.layers.Dense(
            2, kernel_initializer=truncated_normal(encoder.config.initializer_range), dtype=policy, name="span"
        )(sequence)
        mask = MaskPadding(name="mask_padding")
        outputs = {
            "start_logits": mask(span_logits[:, :, 0], inputs["padding_mask"]),
            "end_logits": mask(span_logits[:, :, 1], inputs["padding_mask"]),
        }
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self._remember(encoder, {}, dtype)
        self._track("start_accuracy", "end_accuracy")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        total = 0.0
        for side in ("start", "end"):
            positions = ops.cast(y[f"{side}_positions"], "int32")
            total = total + ops.mean(keras.losses.sparse_categorical_crossentropy(
                positions, y_pred[f"{side}_logits"], from_logits=True))
        return total / 2.0

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        values = {}
        for side in ("start", "end"):
            predicted = ops.cast(ops.argmax(y_pred[f"{side}_logits"], axis=-1), "int32")
            hits = ops.equal(predicted, ops.cast(y[f"{side}_positions"], "int32"))
            values[f"{side}_accuracy"] = ops.mean(ops.cast(hits, "float32"))
        return self._update_trackers(values, ops.size(hits))
