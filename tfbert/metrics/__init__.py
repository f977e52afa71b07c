"""Evaluation metrics: NumPy functions over whole sets, and streaming Keras metrics for `fit`."""

from tfbert.metrics.classification import accuracy, f1_score, matthews_correlation
from tfbert.metrics.correlation import average_ranks, pearson_correlation, spearman_correlation
from tfbert.metrics.keras_metrics import F1, MatthewsCorrelation
from tfbert.metrics.similarity import paired_cosine, sts_correlations, translation_accuracy, unit_rows
from tfbert.metrics.squad import evaluate_squad, normalize_answer, squad_exact_match, squad_f1

__all__ = [
    "F1",
    "MatthewsCorrelation",
    "accuracy",
    "average_ranks",
    "evaluate_squad",
    "f1_score",
    "matthews_correlation",
    "normalize_answer",
    "paired_cosine",
    "pearson_correlation",
    "spearman_correlation",
    "squad_exact_match",
    "squad_f1",
    "sts_correlations",
    "translation_accuracy",
    "unit_rows",
]
