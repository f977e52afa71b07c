"""Classification metrics over whole evaluation sets: accuracy, F1 and Matthews correlation.

Example:
    >>> accuracy([1, 0, 1], [1, 1, 1])
    0.6666666666666666
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def _labels(y_true: ArrayLike, y_pred: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    true, pred = np.asarray(y_true).reshape(-1), np.asarray(y_pred).reshape(-1)
    if true.shape != pred.shape:
        raise ValueError(f"y_true has {true.size} labels but y_pred has {pred.size}")
    if true.size == 0:
        raise ValueError("no labels to score")
    return true, pred


def accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Fraction of predictions equal to the label."""
    true, pred = _labels(y_true, y_pred)
    return float(np.mean(true == pred))


def _f1_of_class(true: np.ndarray, pred: np.ndarray, label) -> float:
    true_positives = np.sum((pred == label) & (true == label))
    predicted, actual = np.sum(pred == label), np.sum(true == label)
    if predicted + actual == 0:
        return 0.0
    return float(2 * true_positives / (predicted + actual))


def f1_score(y_true: ArrayLike, y_pred: ArrayLike, average: str = "binary", positive_label=1) -> float:
    """F1 of `positive_label` (`average="binary"`, GLUE MRPC/QQP) or the unweighted mean over classes (`"macro"`).

    Classes with neither a label nor a prediction score 0, as in scikit-learn.

    Example:
        >>> f1_score([1, 1, 0, 0], [1, 0, 0, 0])
        0.6666666666666666
    """
    true, pred = _labels(y_true, y_pred)
    if average == "binary":
        return _f1_of_class(true, pred, positive_label)
    if average == "macro":
        classes = np.union1d(true, pred)
        return float(np.mean([_f1_of_class(true, pred, label) for label in classes]))
    raise ValueError(f"unknown average {average!r}; expected 'binary' or 'macro'")


def matthews_correlation(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Matthews correlation coefficient (multi-class form, Gorodkin 2004); 0 when undefined (GLUE CoLA).

    Example:
        >>> matthews_correlation([1, 0, 1, 0], [1, 0, 1, 0])
        1.0
    """
    true, pred = _labels(y_true, y_pred)
    classes, indices = np.unique(np.concatenate([true, pred]), return_inverse=True)
    confusion = np.zeros((len(classes), len(classes)), np.float64)
    np.add.at(confusion, (indices[: true.size], indices[true.size :]), 1)
    samples = confusion.sum()
    correct = np.trace(confusion)
    true_counts, pred_counts = confusion.sum(axis=1), confusion.sum(axis=0)
    numerator = correct * samples - np.dot(true_counts, pred_counts)
    denominator = np.sqrt((samples**2 - np.dot(pred_counts, pred_counts)) * (samples**2 - np.dot(true_counts, true_counts)))
    return float(numerator / denominator) if denominator else 0.0
