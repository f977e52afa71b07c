"""Multiple choice (RACE, SWAG): every choice is encoded with the question, one logit per choice."""

from __future__ import annotations

import keras
from keras import ops

from tfbert.models.tasks.base import EncoderLike, TaskModel, as_encoder, label_tensor, policy_name
from tfbert.models.tasks.layers import MergeChoices, SplitChoices, pooled_dense_head


@keras.saving.register_keras_serializable(package="tfbert")
class MultipleChoice(TaskModel):
    """Scores each of the choices of a question; the answer is the highest.

    Inputs: the encoder's names with shape `[batch, choices, length]` (each
    row `[CLS] context/question [SEP] choice [SEP]`), reshaped to
    `[batch * choices, length]` for the encoder. Output: `{"logits": [batch,
    choices]}`, float32 (dropout + dense(1) on each choice's vector: BERT's
    pooler output with `pooling="pooler"`, or `"mean"` / `"cls"` as in
    `SequenceClassifier`). Labels:
    the index of the right choice `[batch]`. Loss: cross-entropy over the
    choices; metrics: `loss`, `accuracy`.

    Example:
        >>> import numpy as np
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
        >>> model = MultipleChoice(load_pretrained_encoder("runs/bert"))
        >>> features = {"token_ids": np.full((2, 4, 16), 7592), "padding_mask": np.ones((2, 4, 16), "int32"),
        ...             "segment_ids": np.zeros((2, 4, 16), "int32")}   # [examples, choices, length]
        >>> tuple(model(features)["logits"].shape)       # model.fit(features, answers) trains it
        (2, 4)
    """

    def __init__(self, encoder: EncoderLike, dropout_rate: float | None = None, pooling: str = "pooler",
                 dtype: str | None = None, **kwargs):
        encoder = as_encoder(encoder, dtype)
        policy = policy_name(encoder, dtype)
        inputs = {name: keras.Input(shape=(None, None), dtype="int32", name=name) for name in encoder.input}
        merge = MergeChoices(name="merge_choices")
        merged = {name: merge(tensor) for name, tensor in inputs.items()}
        scores = pooled_dense_head(encoder, merged, 1, dropout_rate, pooling, policy, "scorer")
        logits = SplitChoices(name="split_choices")(scores, inputs["token_ids"])
        super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
        self._remember(encoder, {"dropout_rate": dropout_rate, "pooling": pooling}, dtype)
        self._track("accuracy")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        labels = ops.cast(label_tensor(y), "int32")
        return ops.mean(keras.losses.sparse_categorical_crossentropy(labels, y_pred["logits"], from_logits=True))

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        labels = ops.cast(label_tensor(y), "int32")
        hits = ops.equal(ops.cast(ops.argmax(y_pred["logits"], axis=-1), "int32"), labels)
        return self._update_trackers({"accuracy": ops.mean(ops.cast(hits, "float32"))}, ops.size(hits))
