"""Strategies, precision and input distribution for TPUs, GPUs, several machines and CPUs."""

from tfbert.distribute.data import distribute_dataset, per_replica_batch_size, shard_for_input_pipeline
from tfbert.distribute.precision import PrecisionChoice, apply_precision, choose_precision, pick_precision
from tfbert.distribute.replicas import cross_replica_sum, use_global_batch_losses
from tfbert.distribute.strategy import describe_strategy, resolve_strategy, tpu_is_detectable

__all__ = [
    "PrecisionChoice",
    "apply_precision",
    "choose_precision",
    "cross_replica_sum",
    "describe_strategy",
    "distribute_dataset",
    "per_replica_batch_size",
    "pick_precision",
    "resolve_strategy",
    "shard_for_input_pipeline",
    "tpu_is_detectable",
    "use_global_batch_losses",
]
