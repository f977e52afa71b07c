"""Task models on any tfbert encoder, built with `keras.ops` only (any Keras backend)."""

from tfbert.tasks.models.classification import SequenceClassifier, SequenceRegressor
from tfbert.tasks.models.embedding import (EMBEDDING_LOSSES, EmbeddingDistiller, SentenceEmbedder, SiameseEmbedder,
                                           cosine_similarity)
from tfbert.tasks.models.layers import Pooling
from tfbert.tasks.models.multiple_choice import MultipleChoice
from tfbert.tasks.models.question_answering import SpanExtractor
from tfbert.tasks.models.tagging import TokenClassifier

__all__ = [
    "EMBEDDING_LOSSES",
    "EmbeddingDistiller",
    "MultipleChoice",
    "Pooling",
    "SentenceEmbedder",
    "SequenceClassifier",
    "SequenceRegressor",
    "SiameseEmbedder",
    "SpanExtractor",
    "TokenClassifier",
    "cosine_similarity",
]
