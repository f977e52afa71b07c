"""Choose the Keras dtype policy that fits the accelerator.

`"mixed_bfloat16"` on TPUs and on GPUs of compute capability 8.0 or newer
(A100, H100, L4...), `"mixed_float16"` on older GPUs, `"float32"` on CPUs.

Under `"mixed_float16"`, Keras 3 `Model.compile` wraps the optimizer in
`keras.optimizers.LossScaleOptimizer` by itself (see
`keras/src/trainers/trainer.py`, `compile`); tests/distribute checks that, so
the driver does not wrap it a second time.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from tfbert.distribute.strategy import strategy_kind

PRECISIONS = ("auto", "float32", "mixed_float16", "mixed_bfloat16")


def gpu_compute_capability(device: tf.config.PhysicalDevice) -> tuple[int, int] | None:
    """`(major, minor)` compute capability of a physical GPU, or None if unknown."""
    details = tf.config.experimental.get_device_details(device)
    capability = details.get("compute_capability")
    return tuple(capability) if capability else None


def choose_precision(strategy: tf.distribute.Strategy, requested: str = "auto") -> str:
    """The dtype policy name to train with.

    Args:
        strategy: the strategy the model trains under.
        requested: `"auto"` or an explicit policy name, returned unchanged.

    Example:
        >>> import tensorflow as tf
        >>> choose_precision(tf.distribute.get_strategy())  # on a CPU-only host
        'float32'
    """
    if requested not in PRECISIONS:
        raise ValueError(f"Unknown precision {requested!r}; expected one of {PRECISIONS}.")
    if requested != "auto":
        return requested
    if strategy_kind(strategy) == "tpu":
        return "mixed_bfloat16"
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return "float32"
    capabilities = [gpu_compute_capability(gpu) for gpu in gpus]
    if all(capability is not None and capability >= (8, 0) for capability in capabilities):
        return "mixed_bfloat16"
    return "mixed_float16"


def apply_precision(policy: str) -> None:
    """Set the global Keras dtype policy (before the model is built)."""
    keras.mixed_precision.set_global_policy(policy)
