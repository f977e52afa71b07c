"""Task models on any tfbert encoder, built with `keras.ops` only (any Keras backend)."""

from tfbert.models.tasks.classification import SequenceClassifier, SequenceRegressor
from tfbert.models.tasks.embedding import (EMBEDDING_LOSSES, EmbeddingDistiller, SentenceEmbedder, SiameseEmbedder,
                                           cosine_similarity)
from tfbert.models.tasks.layers import Pooling
from tfbert.models.tasks.multiple_choice import MultipleChoice
from tfbert.models.tasks.question_answering import SpanExtractor
from tfbert.models.tasks.tagging import TokenClassifier

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
