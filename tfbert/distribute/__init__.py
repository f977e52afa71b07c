"""Strategies, precision and input distribution for TPUs, GPUs, several machines and CPUs.

The names are imported on first use, so `tfbert.distribute.precision` (which a JAX trainer reads) imports no
TensorFlow.
"""

from tfbert._lazy import by_module, lazy_exports

_EXPORTS = by_module({
    "tfbert.distribute.data": ["distribute_dataset", "per_replica_batch_size", "shard_for_input_pipeline"],
    "tfbert.distribute.precision": ["PrecisionChoice", "apply_precision", "choose_precision", "pick_precision",
                                    "precision_for_devices"],
    "tfbert.distribute.replicas": ["cross_replica_sum", "use_global_batch_losses"],
    "tfbert.distribute.strategy": ["describe_strategy", "resolve_strategy", "tpu_is_detectable"],
})
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
