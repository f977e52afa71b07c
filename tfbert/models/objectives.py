"""Loss and metric pieces shared by the pretraining models: masked means, token losses, ratio metrics.

Everything here is float32 and works on masks given as numbers (never bool
tensors), so it is safe under `MirroredStrategy`, which cannot sum bools.
"""

from __future__ import annotations

import keras
from keras import ops


def masked_mean(values, weights):
    """`sum(values * weights) / max(sum(weights), 1)` in float32."""
    values, weights = ops.cast(values, "float32"), ops.cast(weights, "float32")
    return ops.sum(values * weights) / ops.maximum(ops.sum(weights), 1.0)


def token_cross_entropy(labels, logits):
    """Per-token softmax cross-entropy of float32 `logits` `[..., vocab]` against int `labels` `[...]`."""
    return keras.losses.sparse_categorical_crossentropy(ops.cast(labels, "int32"), ops.cast(logits, "float32"), from_logits=True)


def token_hits(labels, logits):
    """1.0 where the argmax of `logits` is the label, else 0.0."""
    predicted = ops.cast(ops.argmax(logits, axis=-1), "int32")
    return ops.cast(ops.equal(predicted, ops.cast(labels, "int32")), "float32")


def masked_lm_terms(prefix: str, labels, logits, weights) -> dict:
    """`{prefix}_loss` and `{prefix}_accuracy` of token predictions, weighted per prediction slot."""
    return {
        f"{prefix}_loss": masked_mean(token_cross_entropy(labels, logits), weights),
        f"{prefix}_accuracy": masked_mean(token_hits(labels, logits), weights),
    }


@keras.saving.register_keras_serializable(package="tfbert")
class RatioMetric(keras.metrics.Metric):
    """Sum of numerators over sum of denominators across batches: exact precision/recall over an epoch.

    Example:
        >>> precision = RatioMetric(name="rtd_precision")
        >>> precision.update_state(true_positives, predicted_positives)
    """

    def __init__(self, name: str, **kwargs):
        super().__init__(name=name, **kwargs)
        self.numerator = self.add_variable(shape=(), initializer="zeros", name="numerator", dtype="float32")
        self.denominator = self.add_variable(shape=(), initializer="zeros", name="denominator", dtype="float32")

    def update_state(self, numerator, denominator):
        self.numerator.assign_add(ops.cast(numerator, "float32"))
        self.denominator.assign_add(ops.cast(denominator, "float32"))

    def result(self):
        return self.numerator / ops.maximum(self.denominator, 1.0)

    def reset_state(self):
        self.numerator.assign(0.0)
        self.denominator.assign(0.0)
