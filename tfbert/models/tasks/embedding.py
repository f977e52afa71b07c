"""Sentence embeddings (Sentence-BERT): pooled encoder outputs, trained as a siamese network or distilled.

The losses follow sentence-transformers' (same names, same defaults), written with `keras.ops`:

| loss | labels | sentence-transformers |
|---|---|---|
| `"cosine"` | similarity in 0..1 | `CosineSimilarityLoss`: MSE between cos(u, v) and the label |
| `"contrastive"` | 1 similar, 0 not | `ContrastiveLoss`: cosine distance, margin 0.5 |
| `"multiple-negatives"` | none (pairs or triplets) | `MultipleNegativesRankingLoss`: in-batch negatives, scale 20 |
| `"softmax"` | NLI class 0..2 | `SoftmaxLoss`: classifier over (u, v, abs(u - v)) |
"""

from __future__ import annotations

import keras
from keras import ops

from tfbert.models.initializers import truncated_normal
from tfbert.models.tasks.base import EncoderLike, TaskModel, as_encoder, encoder_inputs, label_tensor, policy_name
from tfbert.models.tasks.layers import Pooling

EMBEDDING_LOSSES = ("cosine", "contrastive", "multiple-negatives", "softmax")
PAIR_SIDES = ("first", "second")
TRIPLET_SIDES = ("first", "second", "third")
DISTILLATION_SIDES = ("source", "target")


def l2_normalize(x):
    """Rows scaled to unit length (float32; a zero row stays zero)."""
    x = ops.cast(x, "float32")
    return x / ops.maximum(ops.norm(x, axis=-1, keepdims=True), 1e-12)


def cosine_similarity(a, b):
    """Row-wise cosine similarity of two `[batch, dim]` tensors, float32."""
    return ops.sum(l2_normalize(a) * l2_normalize(b), axis=-1)


def cosine_similarity_loss(first, second, targets):
    """Mean squared error between cos(first, second) and `targets` (sentence-transformers' CosineSimilarityLoss).

    Example:
        >>> import numpy as np
        >>> float(cosine_similarity_loss(np.eye(2), np.eye(2), np.array([1.0, 0.0])))
        0.5
    """
    return ops.mean(ops.square(cosine_similarity(first, second) - ops.cast(targets, "float32")))


def contrastive_loss(first, second, labels, margin: float = 0.5):
    """sentence-transformers' ContrastiveLoss on the cosine distance `d = 1 - cos`:
    `0.5 * (y * d**2 + (1 - y) * relu(margin - d)**2)`, averaged over the batch (1 similar, 0 not).

    Example:
        >>> import numpy as np
        >>> float(contrastive_loss(np.eye(2), np.eye(2), np.array([1.0, 0.0])))  # (0 + 0.5 * 0.5**2) / 2
        0.0625
    """
    labels = ops.cast(labels, "float32")
    distance = 1.0 - cosine_similarity(first, second)
    return ops.mean(0.5 * (labels * ops.square(distance) + (1.0 - labels) * ops.square(ops.relu(margin - distance))))


def _ranking_cross_entropy(queries, candidates, scale: float):
    """Cross-entropy of `scale * cos(query i, every candidate)`, candidate i being query i's right answer."""
    scores = scale * ops.matmul(l2_normalize(queries), ops.transpose(l2_normalize(candidates)))
    targets = ops.arange(ops.shape(queries)[0], dtype="int32")
    return ops.mean(keras.losses.sparse_categorical_crossentropy(targets, scores, from_logits=True))


def multiple_negatives_ranking_loss(anchors, positives, negatives=None, scale: float = 20.0, symmetric: bool = False):
    """sentence-transformers' MultipleNegativesRankingLoss: each anchor must pick its positive among every
    positive (and hard negative) of the batch. `symmetric` averages in the backward direction, each
    positive picking its anchor among the batch's anchors (MultipleNegativesSymmetricRankingLoss).

    Example:
        >>> import numpy as np
        >>> float(multiple_negatives_ranking_loss(np.eye(3), np.eye(3))) < 1e-6
        True
    """
    candidates = positives if negatives is None else ops.concatenate([positives, negatives], axis=0)
    forward = _ranking_cross_entropy(anchors, candidates, scale)
    if not symmetric:
        return forward
    return (forward + _ranking_cross_entropy(positives, anchors, scale)) / 2.0


def pair_representation(first, second):
    """`concat(u, v, |u - v|)`, what SoftmaxLoss's classifier reads (Sentence-BERT's NLI objective)."""
    first, second = ops.cast(first, "float32"), ops.cast(second, "float32")
    return ops.concatenate([first, second, ops.abs(first - second)], axis=-1)


def side_inputs(encoder, side: str) -> dict[str, keras.KerasTensor]:
    """The encoder's inputs named `{side}_{name}` (e.g. `first_token_ids`)."""
    return {f"{side}_{name}": keras.Input(shape=(None,), dtype="int32", name=f"{side}_{name}")
            for name in encoder_inputs(encoder)}


def _embed_sides(encoder, pooling: str, sides) -> tuple[dict, dict]:
    """Inputs `{side}_*` and outputs `{side}_embedding` of each side, through one shared encoder and pooling."""
    pool = Pooling(pooling, name="pooling")
    inputs, outputs = {}, {}
    for side in sides:
        side_input = side_inputs(encoder, side)
        plain = {name[len(side) + 1:]: tensor for name, tensor in side_input.items()}
        inputs.update(side_input)
        outputs[f"{side}_embedding"] = pool(encoder(plain)["sequence_output"], plain["padding_mask"])
    return inputs, outputs


@keras.saving.register_keras_serializable(package="tfbert")
class SentenceEmbedder(TaskModel):
    """Maps a text to one vector: mean or max over real tokens, or the first token.

    Output: `{"embedding": [batch, hidden]}` in float32 (unit length with
    `normalize=True`). Compare two texts by the cosine of their embeddings.

    Example:
        >>> import numpy as np
        >>> from tfbert.config import load_config
        >>> from tfbert.models.encoder import build_encoder
        >>> embedder = SentenceEmbedder(build_encoder(load_config("bert_tiny").encoder), pooling="mean", normalize=True)
        >>> ids = np.array([[101, 7592, 102, 0], [101, 2088, 2003, 102]])
        >>> vectors = embedder({"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": ids > 0})
        >>> vectors["embedding"].shape, np.round(np.linalg.norm(vectors["embedding"], axis=1), 4).tolist()
        (TensorShape([2, 128]), [1.0, 1.0])
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


class _Embedders(TaskModel):
    """What the training models of sentence embeddings share: the single-text embedder on their encoder."""

    def embedder(self, normalize: bool = False) -> SentenceEmbedder:
        """The single-text embedding model sharing this model's encoder (weights included)."""
        return SentenceEmbedder(self.encoder, pooling=self.options["pooling"], normalize=normalize,
                                dtype=self._policy_name)


@keras.saving.register_keras_serializable(package="tfbert")
class SiameseEmbedder(_Embedders):
    """Trains sentence embeddings on text pairs (or triplets) with one shared encoder (Sentence-BERT).

    Inputs: the encoder's inputs for each text, prefixed `first_` and `second_`
    (and `third_`, the hard negative, with `triplets=True`). Outputs:
    `{side}_embedding` and the `cosine` of the first two `[batch]`, float32;
    with `loss="softmax"` also `logits` `[batch, num_labels]`.

    Losses (see the module table): `"cosine"` (labels: similarity 0..1),
    `"contrastive"` (labels 1 / 0, `margin`), `"multiple-negatives"` (no labels;
    `scale`, `symmetric`), `"softmax"` (labels: NLI class ids, `num_labels`).

    `embedder()` gives the `SentenceEmbedder` on the trained encoder.

    Example:
        >>> from tfbert.config import load_config
        >>> from tfbert.models.encoder import build_encoder
        >>> from tfbert.finetuning.embeddings import encode_side
        >>> from tfbert.text import WordPieceTokenizer
        >>> tokenizer = WordPieceTokenizer("vocab.txt")
        >>> encoder = build_encoder(load_config("bert_tiny").encoder)
        >>> model = SiameseEmbedder(encoder, loss="multiple-negatives")
        >>> outputs = model({**encode_side(tokenizer, ["a man plays", "a cat"], "first", 16),
        ...                  **encode_side(tokenizer, ["a man is playing", "a dog"], "second", 16)})
        >>> sorted(outputs), tuple(outputs["cosine"].shape)
        (['cosine', 'first_embedding', 'second_embedding'], (2,))
        >>> embedder = model.embedder(normalize=True)   # after model.fit(pair_features)
    """

    def __init__(self, encoder: EncoderLike, pooling: str = "mean", loss: str = "cosine", scale: float = 20.0,
                 margin: float = 0.5, symmetric: bool = False, triplets: bool = False, num_labels: int = 3,
                 dtype: str | None = None, **kwargs):
        if loss not in EMBEDDING_LOSSES:
            raise ValueError(f"unknown embedding loss {loss!r}; expected one of {', '.join(EMBEDDING_LOSSES)}")
        if triplets and loss != "multiple-negatives":
            raise ValueError(f"triplets (anchor, positive, negative) train with loss='multiple-negatives', not {loss!r}")
        encoder = as_encoder(encoder, dtype)
        inputs, outputs = _embed_sides(encoder, pooling, TRIPLET_SIDES if triplets else PAIR_SIDES)
        outputs["cosine"] = cosine_similarity(outputs["first_embedding"], outputs["second_embedding"])
        if loss == "softmax":
            classifier = keras.layers.Dense(num_labels, kernel_initializer=truncated_normal(
                encoder.config.initializer_range), dtype=policy_name(encoder, dtype), name="classifier")
            features = pair_representation(outputs["first_embedding"], outputs["second_embedding"])
            outputs["logits"] = ops.cast(classifier(features), "float32")
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self._remember(encoder, {"pooling": pooling, "loss": loss, "scale": scale, "margin": margin,
                                 "symmetric": symmetric, "triplets": triplets, "num_labels": num_labels}, dtype)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        loss, options = self.options["loss"], self.options
        first, second = y_pred["first_embedding"], y_pred["second_embedding"]
        if loss == "multiple-negatives":
            return multiple_negatives_ranking_loss(first, second, y_pred.get("third_embedding"), options["scale"],
                                                   options["symmetric"])
        if y is None:
            raise ValueError(f"the {loss} loss needs labels")
        labels = label_tensor(y)
        if loss == "cosine":
            return cosine_similarity_loss(first, second, labels)
        if loss == "contrastive":
            return contrastive_loss(first, second, labels, options["margin"])
        return ops.mean(keras.losses.sparse_categorical_crossentropy(labels, y_pred["logits"], from_logits=True))


@keras.saving.register_keras_serializable(package="tfbert")
class EmbeddingDistiller(_Embedders):
    """Multilingual knowledge distillation (Reimers & Gurevych 2020): the student embeds a source sentence
    and its translation, and both embeddings learn the teacher's embedding of the source (mean squared
    error, averaged over both, as sentence-transformers' MSELoss).

    Inputs: the encoder's inputs prefixed `source_` and `target_`; labels: the teacher's
    embeddings `[batch, dim]`. Outputs: `source_embedding`, `target_embedding`, of unit length
    with `normalize=True` (the default, for a teacher whose embeddings have unit length: the
    student then matches directions, not lengths, as a sentence-transformers student ending in
    `Normalize` does).

    Example:
        >>> import numpy as np
        >>> from tfbert.config import load_config
        >>> from tfbert.models.encoder import build_encoder
        >>> from tfbert.finetuning.embeddings import encode_side
        >>> from tfbert.text import WordPieceTokenizer
        >>> tokenizer, texts = WordPieceTokenizer("vocab.txt"), ["the same text", "twice"]
        >>> model = EmbeddingDistiller(build_encoder(load_config("bert_tiny").encoder), pooling="mean")
        >>> outputs = model({**encode_side(tokenizer, texts, "source", 16),
        ...                  **encode_side(tokenizer, texts, "target", 16)})
        >>> bool(np.allclose(outputs["source_embedding"], outputs["target_embedding"], atol=1e-5))
        True
    """

    def __init__(self, encoder: EncoderLike, pooling: str = "mean", normalize: bool = True, dtype: str | None = None,
                 **kwargs):
        encoder = as_encoder(encoder, dtype)
        inputs, outputs = _embed_sides(encoder, pooling, DISTILLATION_SIDES)
        if normalize:
            outputs = {name: l2_normalize(embedding) for name, embedding in outputs.items()}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self._remember(encoder, {"pooling": pooling, "normalize": normalize}, dtype)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        teacher = ops.cast(label_tensor(y), "float32")
        errors = [ops.mean(ops.square(y_pred[f"{side}_embedding"] - teacher)) for side in DISTILLATION_SIDES]
        return (errors[0] + errors[1]) / 2.0
