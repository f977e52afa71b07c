"""Choose the Keras dtype policy that fits the accelerator, and say why.

`"auto"` picks `"mixed_bfloat16"` on TPUs, on GPUs of compute capability 8.0
or newer (A100, H100, L4...) and on CPUs whose measured bfloat16 matmul peak
is at least 1.5x their float32 peak (AVX512-BF16, AMX; see
`tfbert.distribute.peaks`); `"mixed_float16"` on older GPUs; `"float32"`
elsewhere (AVX2 CPUs emulate bfloat16, slower than float32). `"fp32"` and
`"bf16"` name `"float32"` and `"mixed_bfloat16"`.

`TFBERT_MATMUL_PEAKS="FP32,BF16"` (GFLOP/s) stands for the measurement, e.g.
in CI, where timing would make the choice vary from run to run.

Under `"mixed_float16"`, Keras 3 `Model.compile` wraps the optimizer in
`keras.optimizers.LossScaleOptimizer` by itself (see
`keras/src/trainers/trainer.py`, `compile`); tests/distribute checks that, so
the driver does not wrap it a second time.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Callable

import keras
import tensorflow as tf

from tfbert.distribute import peaks as peak_measurement
from tfbert.distribute.strategy import strategy_kind

PRECISION_ALIASES = {"fp32": "float32", "bf16": "mixed_bfloat16"}
PRECISIONS = ("auto", "fp32", "bf16", "float32", "mixed_float16", "mixed_bfloat16")
CPU_BF16_SPEEDUP_NEEDED = 1.5
# On CPUs bf16 runs in graph mode (tfbert.distribute.cpu_bfloat16), which pays only where the matmuls are wide:
# 1.52x fp32 for bert_small (H=512), 2.5x albert_base (H=768), 0.6-0.7x the quickstart's albert_tiny (H=256)
# on a 2-core AMX Xeon (benchmarks/RESULTS.md, "bfloat16 on a CPU with AMX").
CPU_BF16_MIN_HIDDEN_SIZE = 512
PEAKS_VARIABLE = "TFBERT_MATMUL_PEAKS"

logger = logging.getLogger(__name__)



@dataclasses.dataclass(frozen=True)
class PrecisionChoice:
    """A dtype policy name and why it was picked.

    Example:
        >>> PrecisionChoice("float32", "bf16 matmul 0.93x fp32 on this CPU").describe()
        'precision: float32 (bf16 matmul 0.93x fp32 on this CPU)'
    """

    policy: str
    reason: str

    def describe(self) -> str:
        """`precision: POLICY (REASON)`, the line the commands print."""
        return f"precision: {self.policy} ({self.reason})"


def gpu_compute_capability(device: tf.config.PhysicalDevice) -> tuple[int, int] | None:
    """`(major, minor)` compute capability of a physical GPU, or None if unknown."""
    details = tf.config.experimental.get_device_details(device)
    capability = details.get("compute_capability")
    return tuple(capability) if capability else None


def peaks_from_environment() -> peak_measurement.MatmulPeaks | None:
    """The peaks `TFBERT_MATMUL_PEAKS="FP32,BF16"` states, or None where it is unset."""
    value = os.environ.get(PEAKS_VARIABLE)
    if not value:
        return None
    try:
        float32, bfloat16 = (float(part) for part in value.split(","))
    except ValueError:
        raise ValueError(f"{PEAKS_VARIABLE}={value!r}: give two GFLOP/s numbers, float32 then bfloat16, "
                         "e.g. 600,1500") from None
    return peak_measurement.MatmulPeaks(float32, bfloat16, "stated", "CPU")


def cpu_peaks() -> peak_measurement.MatmulPeaks:
    """`TFBERT_MATMUL_PEAKS` where set, else TensorFlow's measured peaks (about 1 s, once per process)."""
    return peaks_from_environment() or peak_measurement.measure_matmul_peaks()


def auto_precision(strategy: tf.distribute.Strategy,
                   peaks: Callable[[], peak_measurement.MatmulPeaks] = cpu_peaks,
                   hidden_size: int | None = None) -> PrecisionChoice:
    """What `"auto"` picks on `strategy`'s hardware; `peaks()` is called on CPU-only hosts only.

    On a CPU, `hidden_size` (the model's, where known) below `CPU_BF16_MIN_HIDDEN_SIZE` keeps float32.
    """
    if strategy_kind(strategy) == "tpu":
        return PrecisionChoice("mixed_bfloat16", "TPU")
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        capabilities = [gpu_compute_capability(gpu) for gpu in gpus]
        if all(capability is not None and capability >= (8, 0) for capability in capabilities):
            return PrecisionChoice("mixed_bfloat16", f"GPU compute capability {min(capabilities)} >= (8, 0)")
        return PrecisionChoice("mixed_float16", "GPU older than compute capability 8.0, no fast bfloat16")
    measured = peaks()
    reason = f"bf16 matmul {measured.ratio:.2f}x fp32 on this CPU"
    if measured.ratio < CPU_BF16_SPEEDUP_NEEDED:
        return PrecisionChoice("float32", reason)
    if hidden_size is not None and hidden_size < CPU_BF16_MIN_HIDDEN_SIZE:
        return PrecisionChoice("float32", f"{reason}, but hidden size {hidden_size} < {CPU_BF16_MIN_HIDDEN_SIZE}: "
                                          "matmuls too narrow to gain on a CPU")
    return PrecisionChoice("mixed_bfloat16", reason)


def pick_precision(strategy: tf.distribute.Strategy, requested: str = "auto",
                   peaks: Callable[[], peak_measurement.MatmulPeaks] = cpu_peaks,
                   hidden_size: int | None = None) -> PrecisionChoice:
    """The dtype policy to train or serve with, and why: `requested` (aliases resolved) or `auto_precision`.

    Example:
        >>> pick_precision(tf.distribute.get_strategy(), "bf16").describe()
        'precision: mixed_bfloat16 (requested)'
    """
    if requested not in PRECISIONS:
        raise ValueError(f"Unknown precision {requested!r}; expected one of {PRECISIONS}.")
    if requested != "auto":
        choice = PrecisionChoice(PRECISION_ALIASES.get(requested, requested), "requested")
    else:
        choice = auto_precision(strategy, peaks, hidden_size)
    logger.info(choice.describe())   # the commands show this logger's lines on stdout
    return choice


def choose_precision(strategy: tf.distribute.Strategy, requested: str = "auto",
                     peaks: Callable[[], peak_measurement.MatmulPeaks] = cpu_peaks,
                     hidden_size: int | None = None) -> str:
    """The dtype policy name to train with (see `pick_precision`).

    Example:
        >>> import tensorflow as tf
        >>> choose_precision(tf.distribute.get_strategy(), "fp32")
        'float32'
    """
    return pick_precision(strategy, requested, peaks, hidden_size).policy


def apply_precision(policy: str) -> None:
    """Set the global Keras dtype policy (before the model is built)."""
    keras.mixed_precision.set_global_policy(PRECISION_ALIASES.get(policy, policy))
