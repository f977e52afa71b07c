"""Sentence embeddings (Sentence-BERT): pooled encoder outputs, trained as a siamese pair."""

from __future__ import annotations

import keras
from keras import ops

from tfbert.tasks.models.base import EncoderLike, TaskModel, as_encoder, encoder_inputs, label_tensor
from tfbert.tasks.models.layers import Pooling

SIAMESE_LOSSES = ("cosine", "contrastive")
PAIR_SIDES = ("first", "second")


def cosine_similarity(a, b):
    """Row-wise cosine similarity of two `[batch, dim]` tensors, float32."""
    a = ops.cast(a, "float32")
    b = ops.cast(b, "float32")
    return ops.sum(a * b, axis=-1) / ops.maximum(ops.norm(a, axis=-1) * ops.norm(b, axis=-1), 1e-12)


def l2_normalize(x):
    return x / ops.maximum(ops.norm(x, axis=-1, keepdims=True), 1e-12)


@keras.saving.register_keras_serializable(package="tfbert")
class SentenceEmbedder(TaskModel):
    """Maps a text to one vector: mean pooling over real tokens or the first token.

    Output: `{"embedding": [batch, hidden]}` in float32 (unit length with
    `normalize=True`). Compare two texts by the cosine of their embeddings.

    Example:
        >>> embedder = SentenceEmbedder(load_huggingface("all-MiniLM-L6-v2/"), pooling="mean")
        >>> vectors = embedder.predict(features)["embedding"]
    """

    def __init__(self, encoder: EncoderLike, pooling: str = "mean", normalize: bool = False,
                 dtype: str | None = None, **kwargs):
        encoder = as_encoder(encoder, dtype)
        inputs = encoder_inputs(encoder)
        embedding = Pooling(pooling, name="pooling")(encoder(inputs)["sequence_output"], inputs["padding_mask"])
        if normalize:
            embedding = l2_normalize(embedding)
        super().__init__(inputs=inputs, outputs={"embedding": embedding}, **kwargs)
        self._remember(encoder, {"pooling": pooling, "normalize": normalize}, dtype)


@keras.saving.register_keras_serializable(package="tfbert")
class SiameseEmbedder(TaskModel):
    """Trains sentence embeddings on text pairs with one shared encoder (Sentence-BERT).

    Inputs: the encoder's inputs twice, prefixed `first_` and `second_`
    (`first_token_ids`, ..., `second_padding_mask`). Outputs: `first_embedding`,
    `second_embedding` and their `cosine` `[batch]`, float32.

    Losses:
        - `"cosine"`: mean squared error between the cosine and a gold
          similarity in [-1, 1] or [0, 1] (labels `[batch]`; STS scores / 5).
        - `"contrastive"`: in-batch negatives (multiple negatives ranking):
          the second text of row i is the positive of the first text of row i
          and every other row's second text is a negative; cross-entropy over
          `scale * cosine` of all pairs. No labels needed.

    `embedder()` gives the `SentenceEmbedder` on the trained encoder.

    Example:
        >>> model = SiameseEmbedder(encoder, loss="contrastive")
        >>> model.fit(pair_features, batch_size=32)
        >>> embedder = model.embedder()
    """

    def __init__(self, encoder: EncoderLike, pooling: str = "mean", loss: str = "cosine", scale: float = 20.0,
                 dtype: str | None = None, **kwargs):
        if loss not in SIAMESE_LOSSES:
            raise ValueError(f"unknown siamese loss {loss!r}; expected one of {', '.join(SIAMESE_LOSSES)}")
        encoder = as_encoder(encoder, dtype)
        pool = Pooling(pooling, name="pooling")
        inputs, outputs = {}, {}
        for side in PAIR_SIDES:
            side_inputs = {name: keras.Input(shape=(None,), dtype="int32", name=f"{side}_{name}")
                           for name in encoder_inputs(encoder)}
            inputs.update({f"{side}_{name}": tensor for name, tensor in side_inputs.items()})
            outputs[f"{side}_embedding"] = pool(encoder(side_inputs)["sequence_output"], side_inputs["padding_mask"])
        outputs["cosine"] = cosine_similarity(outputs["first_embedding"], outputs["second_embedding"])
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self._remember(encoder, {"pooling": pooling, "loss": loss, "scale": scale}, dtype)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if self.options["loss"] == "cosine":
            if y is None:
                raise ValueError("the cosine loss needs gold similarities as labels")
            return ops.mean(ops.square(y_pred["cosine"] - ops.cast(label_tensor(y), "float32")))
        first = l2_normalize(y_pred["first_embedding"])
        second = l2_normalize(y_pred["second_embedding"])
        scores = self.options["scale"] * ops.matmul(first, ops.transpose(second))
        targets = ops.arange(ops.shape(scores)[0], dtype="int32")
        return ops.mean(keras.losses.sparse_categorical_crossentropy(targets, scores, from_logits=True))

    def embedder(self, normalize: bool = False) -> SentenceEmbedder:
        """The single-text embedding model sharing this model's encoder (weights included)."""
        return SentenceEmbedder(self.encoder, pooling=self.options["pooling"], normalize=normalize,
                                dtype=self._policy_name)
