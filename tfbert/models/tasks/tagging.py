"""Token classification (BIO tagging, NER): a dense layer on every token's output."""

from __future__ import annotations

import keras
from keras import ops

from tfbert.models.dropout import Dropout
from tfbert.models.initializers import truncated_normal
from tfbert.models.tasks.base import EncoderLike, TaskModel, as_encoder, encoder_inputs, masked_mean, policy_name


@keras.saving.register_keras_serializable(package="tfbert")
class TokenClassifier(TaskModel):
    """One of `num_tags` tags per token (BIO tags on the first piece of each word).

    Output: `{"logits": [batch, length, num_tags]}` in float32. Labels for
    `fit`: `{"labels": [batch, length], "label_weights": [batch, length]}`,
    weight 1 on the first piece of each word and 0 on other pieces, special
    tokens and padding (see `tfbert.finetuning.tagging.align_word_labels`). Loss:
    cross-entropy averaged over weighted tokens; metrics: `loss`, `accuracy`.

    Example:
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
        >>> from tfbert.finetuning.tagging import encode_tagged_words
        >>> from tfbert.text import load_tokenizer
        >>> tag_names = ["O", "B-PER", "I-PER"]
        >>> features, labels, first_pieces = encode_tagged_words(
        ...     load_tokenizer("runs/bert/tokenizer"), [["Ada", "Lovelace", "wrote"]], [[1, 2, 0]], max_length=16)
        >>> model = TokenClassifier(load_pretrained_encoder("runs/bert"), num_tags=len(tag_names))
        >>> tuple(model(features)["logits"].shape)     # model.fit(features, labels) trains it
        (1, 16, 3)
    """

    def __init__(self, encoder: EncoderLike, num_tags: int, dropout_rate: float | None = None,
                 dtype: str | None = None, **kwargs):
        if num_tags < 2:
            raise ValueError(f"num_tags must be at least 2, got {num_tags}")
        encoder = as_encoder(encoder, dtype)
        policy = policy_name(encoder, dtype)
        inputs = encoder_inputs(encoder)
        sequence = encoder(inputs)["sequence_output"]
        rate = encoder.config.dropout_rate if dropout_rate is None else dropout_rate
        sequence = Dropout(rate, dtype=policy, name="head_dropout")(sequence)
        logits = keras.layers.Dense(
            num_tags, kernel_initializer=truncated_normal(encoder.config.initializer_range), dtype=policy,
            name="tagger",
        )(sequence)
        super().__init__(inputs=inputs, outputs={"logits": ops.cast(logits, "float32")}, **kwargs)
        self._remember(encoder, {"num_tags": num_tags, "dropout_rate": dropout_rate}, dtype)
        self._track("accuracy")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        labels = ops.cast(y["labels"], "int32")
        losses = keras.losses.sparse_categorical_crossentropy(labels, y_pred["logits"], from_logits=True)
        return masked_mean(losses, y["label_weights"])

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        labels = ops.cast(y["labels"], "int32")
        hits = ops.equal(ops.cast(ops.argmax(y_pred["logits"], axis=-1), "int32"), labels)
        return self._update_trackers(
            {"accuracy": masked_mean(ops.cast(hits, "float32"), y["label_weights"])},
            ops.sum(ops.cast(y["label_weights"], "float32")),
        )
