"""Cosine similarity, STS correlations and translation retrieval accuracy of sentence embeddings, NumPy only.

Example:
    >>> translation_accuracy(np.eye(3), np.eye(3))
    (1.0, 1.0)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from tfbert.metrics.correlation import pearson_correlation, spearman_correlation


def unit_rows(vectors: ArrayLike) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero), float32."""
    vectors = np.asarray(vectors, np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)


def paired_cosine(first: ArrayLike, second: ArrayLike) -> np.ndarray:
    """`[n]` cosine of row i of `first` with row i of `second`.

    Example:
        >>> [round(float(c), 3) for c in paired_cosine([[1, 0], [1, 1]], [[1, 0], [0, 1]])]
        [1.0, 0.707]
    """
    return np.sum(unit_rows(first) * unit_rows(second), axis=-1)


def sts_correlations(gold: ArrayLike, predicted: ArrayLike) -> dict[str, float]:
    """Pearson and Spearman correlation of predicted similarities with gold scores (the STS benchmark metrics)."""
    return {"pearson_correlation": pearson_correlation(gold, predicted),
            "spearman_correlation": spearman_correlation(gold, predicted)}


def translation_accuracy(sources: ArrayLike, targets: ArrayLike) -> tuple[float, float]:
    """Top-1 translation retrieval by cosine, both ways: the share of sources whose nearest target is their
    own translation (row i), and of targets whose nearest source is theirs (sentence-transformers'
    TranslationEvaluator).

    Example:
        >>> translation_accuracy([[1, 0], [0, 1]], [[0.9, 0.1], [0.8, 0.2]])
        (1.0, 0.5)
    """
    similarity = unit_rows(sources) @ unit_rows(targets).T
    rows = np.arange(len(similarity))
    return float(np.mean(similarity.argmax(axis=1) == rows)), float(np.mean(similarity.argmax(axis=0) == rows))
