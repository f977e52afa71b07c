"""Cross-replica reductions that model losses need under `tf.distribute`."""

from __future__ import annotations

import keras
import tensorflow as tf


def cross_replica_sum(value: tf.Tensor) -> tf.Tensor:
    """Sum of `value` over the replicas of the current strategy; `value` itself outside one.

    tfbert's pretraining losses divide by the weight of the global batch, which
    needs this inside the replica's train step.
    """
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return value
    return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


def use_global_batch_losses(model: keras.Model) -> None:
    """Make a tfbert model normalise its losses by the global batch (a no-op for models without `replica_sum`)."""
    if hasattr(model, "replica_sum"):
        model.replica_sum = cross_replica_sum
