"""Accuracy, F1, Matthews correlation, Pearson and Spearman on hand-computed cases, and the Keras metrics."""

import math

import numpy as np
import pytest

from tfbert.metrics import (
    F1,
    MatthewsCorrelation,
    accuracy,
    average_ranks,
    f1_score,
    matthews_correlation,
    pearson_correlation,
    spearman_correlation,
)


def test_accuracy_and_length_mismatch():
    assert accuracy([0, 1, 1, 1], [0, 1, 0, 1]) == 0.75
    with pytest.raises(ValueError, match="3 labels but y_pred has 2"):
        accuracy([0, 1, 1], [0, 1])


def test_binary_and_macro_f1():
    y_true = [1, 1, 1, 0, 0, 2]
    y_pred = [1, 0, 1, 1, 0, 2]
    # class 1: tp 2, predicted 3, actual 3 -> 2/3; class 0: tp 1, 2, 2 -> 1/2; class 2: 1.
    assert f1_score(y_true, y_pred) == pytest.approx(2 / 3)
    assert f1_score(y_true, y_pred, average="macro") == pytest.approx((2 / 3 + 1 / 2 + 1) / 3)
    assert f1_score([0, 0], [0, 0]) == 0.0  # no positives anywhere: 0, as scikit-learn


def test_matthews_correlation_binary_formula_and_degenerate_cases():
    y_true = [1, 1, 1, 0, 0, 0, 0, 1]
    y_pred = [1, 0, 1, 0, 0, 1, 0, 1]
    tp, tn, fp, fn = 3, 3, 1, 1
    expected = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert matthews_correlation(y_true, y_pred) == pytest.approx(expected)
    assert matthews_correlation([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)
    assert matthews_correlation([0, 1, 0, 1], [1, 1, 1, 1]) == 0.0


def test_multiclass_matthews_matches_the_covariance_definition():
    rng = np.random.default_rng(0)
    y_true, y_pred = rng.integers(0, 3, 200), rng.integers(0, 3, 200)
    y_pred[:120] = y_true[:120]
    # Gorodkin's R_K = cov(X, Y) / sqrt(cov(X, X) cov(Y, Y)) with one-hot rows.
    x, y = np.eye(3)[y_true], np.eye(3)[y_pred]
    x, y = x - x.mean(0), y - y.mean(0)
    expected = np.sum(x * y) / np.sqrt(np.sum(x * x) * np.sum(y * y))
    assert matthews_correlation(y_true, y_pred) == pytest.approx(expected)


def test_pearson_spearman_and_tied_ranks():
    assert pearson_correlation([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson_correlation([1, 2, 3], [5, 5, 5]) == 0.0
    assert average_ranks([3.0, 1.0, 3.0, 2.0, 3.0]).tolist() == [4.0, 1.0, 4.0, 2.0, 4.0]
    assert spearman_correlation([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(
        pearson_correlation([1, 2, 3, 4, 5], [1, 2, 3.5, 5, 3.5]))
    assert spearman_correlation([1, 2, 3], [1, 8, 27]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least 2"):
        spearman_correlation([1], [1])


def test_keras_metrics_agree_with_numpy_functions_over_several_batches():
    rng = np.random.default_rng(1)
    y_true = rng.integers(0, 3, 64)
    logits = rng.normal(size=(64, 3)) + 2 * np.eye(3)[y_true]
    y_pred = logits.argmax(-1)
    mcc, f1_macro, f1_binary = MatthewsCorrelation(3), F1(3, average="macro"), F1(3, positive_label=2)
    for start in range(0, 64, 16):
        for metric in (mcc, f1_macro, f1_binary):
            metric.update_state(y_true[start:start + 16], logits[start:start + 16])
    assert float(mcc.result()) == pytest.approx(matthews_correlation(y_true, y_pred), abs=1e-6)
    assert float(f1_macro.result()) == pytest.approx(f1_score(y_true, y_pred, average="macro"), abs=1e-6)
    assert float(f1_binary.result()) == pytest.approx(f1_score(y_true, y_pred, positive_label=2), abs=1e-6)
    mcc.reset_state()
    assert float(mcc.result()) == 0.0
