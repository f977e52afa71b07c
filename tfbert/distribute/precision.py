"""Choose the Keras dtype policy that fits the accelerator, and say why: from what the hardware is, never from a
timing, so the same command on the same machine always trains in the same precision.

`"auto"` picks `"mixed_bfloat16"` on TPUs, on GPUs of compute capability 8.0 or newer (A100, H100, L4...) and
on CPUs with bfloat16 instructions (AVX512-BF16, AMX: `tfbert.distribute.peaks.cpu_bf16_flags`) for models at
least `CPU_BF16_MIN_HIDDEN_SIZE` wide; `"mixed_float16"` on older GPUs where the trainer scales the loss
(Keras does), else `"float32"`; `"float32"` on every other CPU (AVX2 and AVX-512 CPUs without BF16 emulate
bfloat16, slower than float32). `"fp32"` and `"bf16"` name `"float32"` and `"mixed_bfloat16"`.

`precision_for_devices` decides from a device kind alone (a JAX trainer has no `tf.distribute` strategy);
`pick_precision` asks TensorFlow what `strategy` runs on. This module imports neither TensorFlow nor Keras
until a strategy is inspected or a policy applied. `TFBERT_CPU_BF16` (`none`, or flags such as
`amx_bf16,amx_tile`) states the CPU's bfloat16 instructions instead of reading `/proc/cpuinfo` (the tests set
it, so the choice does not depend on the machine they run on).

Under `"mixed_float16"`, Keras 3 `Model.compile` wraps the optimizer in
`keras.optimizers.LossScaleOptimizer` by itself (see
`keras/src/trainers/trainer.py`, `compile`); tests/distribute checks that, so
the driver does not wrap it a second time.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import TYPE_CHECKING

from tfbert.distribute.peaks import cpu_bf16_flags

if TYPE_CHECKING:
    import tensorflow as tf

PRECISION_ALIASES = {"fp32": "float32", "bf16": "mixed_bfloat16"}
PRECISIONS = ("auto", "fp32", "bf16", "float32", "mixed_float16", "mixed_bfloat16")
DEVICE_KINDS = ("cpu", "gpu", "tpu")
GPU_BF16_CAPABILITY = (8, 0)
# On CPUs bf16 runs in graph mode (tfbert.distribute.cpu_bfloat16), which pays only where the matmuls are wide:
# 1.52x fp32 for bert_small (H=512), 2.5x albert_base (H=768), 0.6-0.7x the quickstart's albert_tiny (H=256)
# on a 2-core AMX Xeon (benchmarks/RESULTS.md, "bfloat16 on a CPU with AMX").
CPU_BF16_MIN_HIDDEN_SIZE = 512
CPU_BF16_VARIABLE = "TFBERT_CPU_BF16"

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class PrecisionChoice:
    """A dtype policy name and why it was picked.

    Example:
        >>> PrecisionChoice("float32", "no bfloat16 instructions on this CPU").describe()
        'precision: float32 (no bfloat16 instructions on this CPU)'
    """

    policy: str
    reason: str

    def describe(self) -> str:
        """`precision: POLICY (REASON)`, the line the commands print."""
        return f"precision: {self.policy} ({self.reason})"


def cpu_bf16_instructions() -> tuple[tuple[str, ...] | None, str]:
    """The CPU's bfloat16 instruction flags (None: unknown) and where they come from: `TFBERT_CPU_BF16` where set,
    else `/proc/cpuinfo`."""
    stated = os.environ.get(CPU_BF16_VARIABLE)
    if stated is None:
        return cpu_bf16_flags(), "/proc/cpuinfo"
    flags = tuple(flag.strip() for flag in stated.split(",") if flag.strip() and flag.strip() != "none")
    return flags, f"stated by {CPU_BF16_VARIABLE}"


def cpu_precision(hidden_size: int | None = None) -> PrecisionChoice:
    """What `"auto"` picks on this CPU: bfloat16 where it has the instructions and the model (`hidden_size`, where
    known) is at least `CPU_BF16_MIN_HIDDEN_SIZE` wide, else float32."""
    flags, source = cpu_bf16_instructions()
    if flags is None:
        return PrecisionChoice("float32", "the CPU's bfloat16 instructions are unknown (no /proc/cpuinfo)")
    if not flags:
        return PrecisionChoice("float32", f"no bfloat16 instructions on this CPU (no AVX512-BF16, no AMX; {source})")
    reason = f"CPU bfloat16 instructions {', '.join(flags)} ({source})"
    if hidden_size is not None and hidden_size < CPU_BF16_MIN_HIDDEN_SIZE:
        return PrecisionChoice("float32", f"{reason}, but hidden size {hidden_size} < {CPU_BF16_MIN_HIDDEN_SIZE}: "
                                          "matmuls too narrow to gain on a CPU")
    return PrecisionChoice("mixed_bfloat16", reason)


def precision_for_devices(device_kind: str, requested: str = "auto", hidden_size: int | None = None,
                          gpu_capability: tuple[int, int] | None = None, *,
                          loss_scaling: bool = False) -> PrecisionChoice:
    """The dtype policy for a run on `device_kind` (`cpu`, `gpu` or `tpu`) and why, without TensorFlow.

    `requested` other than `"auto"` is taken as it is (aliases resolved). `"auto"`: bfloat16 on TPUs and on GPUs
    of `gpu_capability` >= (8, 0); older (or unknown) GPUs get `mixed_float16` where the trainer scales the loss
    (`loss_scaling`, as Keras does), else float32; CPUs follow `cpu_precision`.

    Example:
        >>> precision_for_devices("gpu", gpu_capability=(9, 0)).describe()
        'precision: mixed_bfloat16 (GPU compute capability (9, 0) >= (8, 0))'
        >>> precision_for_devices("tpu", "fp32").policy
        'float32'
    """
    if requested not in PRECISIONS:
        raise ValueError(f"Unknown precision {requested!r}; expected one of {PRECISIONS}.")
    if device_kind not in DEVICE_KINDS:
        raise ValueError(f"Unknown device kind {device_kind!r}; expected one of {DEVICE_KINDS}.")
    if requested != "auto":
        return PrecisionChoice(PRECISION_ALIASES.get(requested, requested), "requested")
    if device_kind == "tpu":
        return PrecisionChoice("mixed_bfloat16", "TPU")
    if device_kind == "cpu":
        return cpu_precision(hidden_size)
    if gpu_capability is not None and tuple(gpu_capability) >= GPU_BF16_CAPABILITY:
        return PrecisionChoice("mixed_bfloat16", f"GPU compute capability {tuple(gpu_capability)} >= (8, 0)")
    known = f"compute capability {tuple(gpu_capability)}" if gpu_capability is not None else "unknown capability"
    if loss_scaling:
        return PrecisionChoice("mixed_float16", f"GPU of {known}, older than 8.0: no fast bfloat16")
    return PrecisionChoice("float32", f"GPU of {known}, older than 8.0: no fast bfloat16")


def gpu_compute_capability(device: tf.config.PhysicalDevice) -> tuple[int, int] | None:
    """`(major, minor)` compute capability of a physical GPU, or None if unknown."""
    import tensorflow as tf

    details = tf.config.experimental.get_device_details(device)
    capability = details.get("compute_capability")
    return tuple(capability) if capability else None


def strategy_devices(strategy: tf.distribute.Strategy) -> tuple[str, tuple[int, int] | None]:
    """`(device kind, the least GPU compute capability or None)` of what `strategy` trains on."""
    # Deferred (start-up): `tfbert.distribute.strategy` imports TensorFlow; JAX runs choose a precision here without it
    import tensorflow as tf

    from tfbert.distribute.strategy import strategy_kind

    if strategy_kind(strategy) == "tpu":
        return "tpu", None
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return "cpu", None
    capabilities = [gpu_compute_capability(gpu) for gpu in gpus]
    return "gpu", None if None in capabilities else min(capabilities)


def pick_precision(strategy: tf.distribute.Strategy, requested: str = "auto",
                   hidden_size: int | None = None) -> PrecisionChoice:
    """The dtype policy to train or serve with on `strategy`'s hardware, and why (`precision_for_devices`; Keras
    scales float16 losses itself). Logs `precision: POLICY (REASON)`.

    Example:
        >>> import tensorflow as tf
        >>> pick_precision(tf.distribute.get_strategy(), "bf16").describe()
        'precision: mixed_bfloat16 (requested)'
    """
    if requested not in PRECISIONS:
        raise ValueError(f"Unknown precision {requested!r}; expected one of {PRECISIONS}.")
    kind, capability = strategy_devices(strategy) if requested == "auto" else ("cpu", None)
    choice = precision_for_devices(kind, requested, hidden_size, capability, loss_scaling=True)
    logger.info(choice.describe())   # the commands show this logger's lines on stdout
    return choice


def choose_precision(strategy: tf.distribute.Strategy, requested: str = "auto",
                     hidden_size: int | None = None) -> str:
    """The dtype policy name to train with (see `pick_precision`).

    Example:
        >>> import tensorflow as tf
        >>> choose_precision(tf.distribute.get_strategy(), "fp32")
        'float32'
    """
    return pick_precision(strategy, requested, hidden_size).policy


def apply_precision(policy: str) -> None:
    """Set the global Keras dtype policy (before the model is built)."""
    import keras

    keras.mixed_precision.set_global_policy(PRECISION_ALIASES.get(policy, policy))
