"""Pearson and Spearman correlation (GLUE STS-B, sentence-embedding evaluation), NumPy only.

Example:
    >>> spearman_correlation([1, 2, 3, 4], [10, 20, 30, 100])
    1.0
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def _pair(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(x, np.float64).reshape(-1), np.asarray(y, np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"correlation of {a.size} values with {b.size} values")
    if a.size < 2:
        raise ValueError("correlation needs at least 2 values")
    return a, b


def pearson_correlation(x: ArrayLike, y: ArrayLike) -> float:
    """Pearson's r; 0 when either side is constant."""
    a, b = _pair(x, y)
    a, b = a - a.mean(), b - b.mean()
    denominator = np.sqrt(np.sum(a * a) * np.sum(b * b))
    return float(np.sum(a * b) / denominator) if denominator else 0.0


def average_ranks(values: ArrayLike) -> np.ndarray:
    """1-based ranks; tied values share the mean of their ranks (as `scipy.stats.rankdata`).

    Example:
        >>> average_ranks([10, 20, 10, 30]).tolist()
        [1.5, 3.0, 1.5, 4.0]
    """
    values = np.asarray(values).reshape(-1)
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    # Start index of each run of equal values, in sorted order.
    run_starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    run_ends = np.r_[run_starts[1:], values.size]
    run_ranks = (run_starts + run_ends + 1) / 2.0
    ranks = np.empty(values.size, np.float64)
    ranks[order] = np.repeat(run_ranks, run_ends - run_starts)
    return ranks


def spearman_correlation(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho: Pearson's r of the average ranks."""
    a, b = _pair(x, y)
    return pearson_correlation(average_ranks(a), average_ranks(b))
