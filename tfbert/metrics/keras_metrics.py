"""Streaming Keras metrics for `fit`: Matthews correlation and F1 from a running confusion matrix.

`keras.metrics.SparseCategoricalAccuracy` and `keras.metrics.PearsonCorrelation`
cover accuracy and Pearson's r; Spearman's rho and the SQuAD scores need the
whole evaluation set and are computed after `predict` (see `tfbert.tasks`).

Example:
    >>> metric = MatthewsCorrelation(num_classes=2)
    >>> metric.update_state([1, 0, 1], [[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    >>> float(metric.result())
    1.0
"""

from __future__ import annotations

import keras
from keras import ops


class ConfusionMatrixMetric(keras.metrics.Metric):
    """Accumulates a `[num_classes, num_classes]` confusion matrix (rows: labels, columns: argmax of logits)."""

    def __init__(self, num_classes: int, name: str | None = None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.num_classes = num_classes
        self.confusion = self.add_variable(shape=(num_classes, num_classes), initializer="zeros",
                                           dtype="float32", name="confusion")

    def update_state(self, y_true, y_pred, sample_weight=None):
        labels = ops.reshape(ops.cast(y_true, "int32"), (-1,))
        predicted = ops.reshape(ops.cast(ops.argmax(y_pred, axis=-1), "int32"), (-1,))
        weights = ops.ones_like(labels, "float32") if sample_weight is None else ops.reshape(
            ops.cast(sample_weight, "float32"), (-1,))
        cells = ops.one_hot(labels * self.num_classes + predicted, self.num_classes**2, dtype="float32")
        counts = ops.sum(cells * weights[:, None], axis=0)
        self.confusion.assign_add(ops.reshape(counts, (self.num_classes, self.num_classes)))

    def reset_state(self):
        self.confusion.assign(ops.zeros_like(self.confusion))

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype}


@keras.saving.register_keras_serializable(package="tfbert")
class MatthewsCorrelation(ConfusionMatrixMetric):
    """Matthews correlation coefficient over everything seen since the last reset."""

    def __init__(self, num_classes: int = 2, name: str = "matthews_correlation", dtype=None):
        super().__init__(num_classes, name=name, dtype=dtype)

    def result(self):
        confusion = self.confusion
        samples = ops.sum(confusion)
        correct = ops.trace(confusion)
        true_counts, pred_counts = ops.sum(confusion, axis=1), ops.sum(confusion, axis=0)
        numerator = correct * samples - ops.sum(true_counts * pred_counts)
        denominator = ops.sqrt((samples**2 - ops.sum(pred_counts**2)) * (samples**2 - ops.sum(true_counts**2)))
        return ops.where(denominator > 0, numerator / ops.maximum(denominator, 1e-12), 0.0)


@keras.saving.register_keras_serializable(package="tfbert")
class F1(ConfusionMatrixMetric):
    """F1 of class `positive_label` (`average="binary"`) or the macro average over classes."""

    def __init__(self, num_classes: int = 2, average: str = "binary", positive_label: int = 1,
                 name: str = "f1", dtype=None):
        if average not in ("binary", "macro"):
            raise ValueError(f"unknown average {average!r}; expected 'binary' or 'macro'")
        super().__init__(num_classes, name=name, dtype=dtype)
        self.average = average
        self.positive_label = positive_label

    def result(self):
        true_positives = ops.diagonal(self.confusion)
        support = ops.sum(self.confusion, axis=1) + ops.sum(self.confusion, axis=0)
        per_class = ops.where(support > 0, 2 * true_positives / ops.maximum(support, 1e-12), 0.0)
        if self.average == "binary":
            return per_class[self.positive_label]
        present = ops.cast(support > 0, "float32")
        return ops.sum(per_class * present) / ops.maximum(ops.sum(present), 1.0)

    def get_config(self):
        return {**super().get_config(), "average": self.average, "positive_label": self.positive_label}
