"""Losses and metrics of the pretraining models: float32, and exact when a batch is split over replicas.

Under `tf.distribute`, Keras sums the replicas' gradients, so each replica's
loss must be its share of the *global* loss: its weighted sum divided by the
weight of the whole global batch. `replica_sum` is the backend's cross-replica
sum of a scalar (`tfbert.distribute.cross_replica_sum`, installed by the
training driver); without it the batch is the whole batch, as on one device or
under JAX's SPMD distribution. Masks are numbers, never bool tensors, which
`MirroredStrategy` cannot sum.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

import keras
from keras import ops

from tfbert.models.policies import policy_name

ReplicaSum = Callable[[Any], Any]
# Per-element float32 (loss, hit, weight) of one objective, e.g. MLM over [batch, predictions].
Terms = tuple[Any, Any, Any]


def sparse_cross_entropy(labels, logits) -> tuple[Any, Any]:
    """Per-element float32 cross-entropy and hit (argmax == label) of integer labels."""
    labels = ops.cast(labels, "int32")
    logits = ops.cast(logits, "float32")
    loss = keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    hits = ops.cast(ops.equal(ops.cast(ops.argmax(logits, axis=-1), "int32"), labels), "float32")
    return loss, hits


def global_sum(value, replica_sum: ReplicaSum | None = None):
    """`value` summed over the replicas, or `value` itself outside a distributed step."""
    return value if replica_sum is None else replica_sum(value)


def replica_share_of_mean(values, weights, replica_sum: ReplicaSum | None = None):
    """This replica's share of `sum(values * weights) / sum(weights)` over the global batch.

    The shares of all replicas add up to the global weighted mean, so the
    summed gradients are those of one device with the whole batch.
    """
    weights = ops.cast(weights, "float32")
    total_weight = global_sum(ops.stop_gradient(ops.sum(weights)), replica_sum)
    return ops.sum(values * weights) / ops.maximum(total_weight, 1.0)


def global_mean(values, weights, replica_sum: ReplicaSum | None = None):
    """The weighted mean over the global batch, the same on every replica (for metrics)."""
    weights = ops.cast(weights, "float32")
    total = global_sum(ops.sum(ops.stop_gradient(values) * weights), replica_sum)
    return total / ops.maximum(global_sum(ops.sum(weights), replica_sum), 1.0)


class WeightedObjectives:
    """Mixin for pretraining models: `compute_loss` and `compute_metrics` from `objective_terms`.

    A model lists its objectives, optional loss weights (ELECTRA weighs RTD
    50), and defines `objective_terms(x, y, y_pred)` returning each
    objective's per-element `(loss, hit, weight)`. The loss is the weighted
    sum of the objectives' weighted means over the global batch; metrics are
    `{objective}_loss` and `{objective}_accuracy`, every replica recording the
    global batch's values so Keras' mean over replicas is exact.

    Example:
        >>> class MyModel(WeightedObjectives, keras.Model):   # a template  # doctest: +SKIP
        ...     def __init__(self, ...):
        ...         super().__init__(inputs=..., outputs=...)
        ...         self.track_objectives(("mlm",))
        ...     def objective_terms(self, x, y, y_pred):
        ...         loss, hits = sparse_cross_entropy(y["masked_ids"], y_pred["mlm_logits"])
        ...         return {"mlm": (loss, hits, y["masked_weights"])}
    """

    # Constructor arguments besides `config`, `name`, `trainable` and `dtype` that `get_config` records.
    config_arguments: tuple[str, ...] = ()

    def track_objectives(self, objectives: tuple[str, ...], loss_weights: Mapping[str, float] | None = None) -> None:
        # The backend's cross-replica sum, set by tfbert.training under tf.distribute.
        self.replica_sum: ReplicaSum | None = None
        self.loss_weights = dict(loss_weights or {})
        self._trackers = {
            name: keras.metrics.Mean(name=name)
            for objective in objectives
            for name in (f"{objective}_loss", f"{objective}_accuracy")
        }

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Weighted sum of the objectives' means over the global batch (exact across replicas)."""
        return sum(
            self.loss_weights.get(objective, 1.0) * replica_share_of_mean(loss, weight, self.replica_sum)
            for objective, (loss, _, weight) in self.objective_terms(x, y, y_pred).items()
        )

    def save_encoder(self, directory: str) -> str:
        """Writes the encoder that fine-tuning and export use (`self.encoder`) to `directory/encoder.keras`."""
        path = f"{directory.rstrip('/')}/encoder.keras"
        encoder = self.encoder_to_save()
        if "://" in directory:
            encoder.save(path)
            return path
        os.makedirs(directory, exist_ok=True)
        # Written under a temporary name and renamed: a kill while saving leaves the previous file whole.
        temporary = os.path.join(directory, f".tfbert-tmp-{os.getpid()}-encoder.keras")
        encoder.save(temporary)
        os.replace(temporary, path)
        return path

    def encoder_to_save(self):
        """The stand-alone encoder `save_encoder` writes: `self.encoder` (DeBERTa's RTD model merges its tables)."""
        return self.encoder

    def record_dtype_policy(self, policy) -> None:
        """Keeps the `dtype` argument for `get_config`: None (the global policy when loaded) stays None."""
        self._policy_name = policy_name(policy)

    def get_config(self) -> dict[str, Any]:
        return {
            "config": self.config.to_dict(),
            **{argument: getattr(self, argument) for argument in self.config_arguments},
            "name": self.name,
            "trainable": self.trainable,
            "dtype": self._policy_name,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]):
        return cls(**config)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        for objective, (loss, hits, weight) in self.objective_terms(x, y, y_pred).items():
            # Weighted by the batch's total weight: the result is the mean over every element seen,
            # and a batch without elements (Keras' last evaluation step on a dataset of unknown
            # size) changes nothing.
            total_weight = global_sum(ops.sum(ops.cast(weight, "float32")), self.replica_sum)
            for name, values in ((f"{objective}_loss", loss), (f"{objective}_accuracy", hits)):
                self._trackers[name].update_state(global_mean(values, weight, self.replica_sum), total_weight)
        return self.get_metrics_result()


@keras.saving.register_keras_serializable(package="tfbert")
class RatioMetric(keras.metrics.Metric):
    """Sum of numerators over sum of denominators across batches: exact precision/recall over an epoch.

    Example:
        >>> precision = RatioMetric(name="rtd_precision")
        >>> precision.update_state(3, 4)      # true positives, predicted positives of a batch
        >>> precision.update_state(1, 4)
        >>> float(precision.result())
        0.5
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
