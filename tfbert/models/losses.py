"""Float32 losses that stay exact when a batch is split over replicas.

Under `tf.distribute`, Keras sums the replicas' gradients, so each replica's
loss must be its share of the *global* loss: its weighted sum divided by the
weight of the whole global batch. `replica_sum` is the backend's cross-replica
sum of a scalar (tfbert.distribute provides the TensorFlow one); without it the
batch is the whole batch, as on one device or under JAX's SPMD distribution.
"""

from __future__ import annotations

from typing import Callable

import keras
from keras import ops

ReplicaSum = Callable[[object], object]


def sparse_cross_entropy(labels, logits):
    """Per-element float32 cross-entropy and hit (argmax == label) of integer labels."""
    labels = ops.cast(labels, "int32")
    logits = ops.cast(logits, "float32")
    loss = keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    hits = ops.cast(ops.equal(ops.cast(ops.argmax(logits, axis=-1), "int32"), labels), "float32")
    return loss, hits


def _global(value, replica_sum: ReplicaSum | None):
    return value if replica_sum is None else replica_sum(value)


def replica_share_of_mean(values, weights, replica_sum: ReplicaSum | None = None):
    """This replica's share of `sum(values * weights) / sum(weights)` over the global batch.

    The shares of all replicas add up to the global weighted mean, so the
    summed gradients are those of one device with the whole batch.
    """
    weights = ops.cast(weights, "float32")
    total_weight = _global(ops.stop_gradient(ops.sum(weights)), replica_sum)
    return ops.sum(values * weights) / ops.maximum(total_weight, 1.0)


def global_mean(values, weights, replica_sum: ReplicaSum | None = None):
    """The weighted mean over the global batch, the same on every replica (for metrics)."""
    weights = ops.cast(weights, "float32")
    total = _global(ops.sum(ops.stop_gradient(values) * weights), replica_sum)
    return total / ops.maximum(_global(ops.sum(weights), replica_sum), 1.0)
