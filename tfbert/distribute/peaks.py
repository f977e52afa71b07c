"""This machine's float32 and bfloat16 matmul peaks, and the CPU's bfloat16 instructions.

A peak is the best GFLOP/s of a square matmul (after a warm-up call, best of a
few timed repeats), measured with TensorFlow on its default device and, where
JAX is installed, with JAX; `tfbert info` and benchmarks/precision.py print
them. `choose_precision("auto")` reads the CPU's bfloat16 instructions instead
(`cpu_bf16_flags`: AVX512-BF16, AMX), which do not change from run to run as a
timing on a shared machine does; on CPUs without them oneDNN emulates bfloat16
and it is slower than float32. `TFBERT_MATMUL_PEAKS="FP32,BF16"` (GFLOP/s)
states the peaks `tfbert info` shows instead of timing them (the tests set it).
TensorFlow is imported only when a peak is measured.

Measured by hand, in a few lines: no library reports a device's achieved
matmul rate.

Example:
    >>> peaks = measure_matmul_peaks()   # times this machine for about a second  # doctest: +SKIP
    >>> peaks.describe()  # doctest: +SKIP
    'float32 610.2 GFLOP/s, bfloat16 1650.4 GFLOP/s (2.70x)'
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import tensorflow as tf

BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16", "amx_tile")
PEAKS_VARIABLE = "TFBERT_MATMUL_PEAKS"


@dataclasses.dataclass(frozen=True)
class MatmulPeaks:
    """Best square-matmul rates, GFLOP/s, of one framework on one device.

    Example:
        >>> MatmulPeaks(float32=100.0, bfloat16=250.0).ratio
        2.5
    """

    float32: float
    bfloat16: float
    framework: str = "TensorFlow"
    device: str = "CPU"

    @property
    def ratio(self) -> float:
        """bfloat16 peak over float32 peak."""
        return self.bfloat16 / self.float32

    def describe(self) -> str:
        """`float32 8.2 GFLOP/s, bfloat16 7.8 GFLOP/s (0.95x)`."""
        return (f"float32 {self.float32:.1f} GFLOP/s, bfloat16 {self.bfloat16:.1f} GFLOP/s "
                f"({self.ratio:.2f}x)")


def best_rate(run: Callable[[], object], flops: float, repeats: int, calls: int) -> float:
    """Best GFLOP/s of `calls` back-to-back `run()`s (each returns something `finish` can wait on)."""
    finish(run())   # warm-up: tracing, compilation, allocation
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls - 1):
            run()
        finish(run())
        best = max(best, calls * flops / (time.perf_counter() - start) / 1e9)
    return best


def finish(result) -> None:
    """Waits for an asynchronously computed array (TensorFlow or JAX)."""
    if hasattr(result, "block_until_ready"):
        result.block_until_ready()
    else:
        result.numpy()


def tensorflow_rate(dtype: tf.DType, size: int, repeats: int, calls: int) -> float:
    """TensorFlow's best `size`x`size` matmul rate in `dtype` on its default device, GFLOP/s."""
    import tensorflow as tf

    matrix = tf.cast(tf.random.stateless_normal((size, size), seed=(1, 2)), dtype)
    matmul = tf.function(lambda x: tf.matmul(x, x))
    return best_rate(lambda: matmul(matrix), 2.0 * size**3, repeats, calls)


def tensorflow_device() -> str:
    """`GPU`, `TPU` or `CPU`: where TensorFlow places a matmul by default."""
    import tensorflow as tf

    for kind in ("TPU", "GPU"):
        if tf.config.list_logical_devices(kind):
            return kind
    return "CPU"


@functools.cache
def measure_matmul_peaks(size: int = 1024, repeats: int = 3, calls: int = 3) -> MatmulPeaks:
    """TensorFlow's float32 and bfloat16 matmul peaks on its default device (about 1 s on a CPU; cached)."""
    import tensorflow as tf

    return MatmulPeaks(tensorflow_rate(tf.float32, size, repeats, calls),
                       tensorflow_rate(tf.bfloat16, size, repeats, calls), "TensorFlow", tensorflow_device())


def peaks_from_environment() -> MatmulPeaks | None:
    """The peaks `TFBERT_MATMUL_PEAKS="FP32,BF16"` states, or None where it is unset."""
    value = os.environ.get(PEAKS_VARIABLE)
    if not value:
        return None
    try:
        float32, bfloat16 = (float(part) for part in value.split(","))
    except ValueError:
        raise ValueError(f"{PEAKS_VARIABLE}={value!r}: give two GFLOP/s numbers, float32 then bfloat16, "
                         "e.g. 600,1500") from None
    return MatmulPeaks(float32, bfloat16, "stated", "CPU")


def measure_jax_peaks(size: int = 1024, repeats: int = 3, calls: int = 3) -> MatmulPeaks | None:
    """JAX's float32 and bfloat16 matmul peaks on its default device, or None where JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    matmul = jax.jit(lambda x: x @ x)
    matrix = jax.random.normal(jax.random.PRNGKey(0), (size, size))
    rates = {dtype: best_rate(lambda m=matrix.astype(dtype): matmul(m), 2.0 * size**3, repeats, calls)
             for dtype in (jnp.float32, jnp.bfloat16)}
    return MatmulPeaks(rates[jnp.float32], rates[jnp.bfloat16], "JAX", jax.devices()[0].platform.upper())


def cpu_bf16_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> tuple[str, ...] | None:
    """The CPU's bfloat16 instruction flags (`avx512_bf16`, `amx_bf16`, `amx_tile`), or None where unknown."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return None
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
            break
    return tuple(flag for flag in BF16_CPU_FLAGS if flag in flags)


def describe_cpu_bf16(flags: tuple[str, ...] | None) -> str:
    """`CPU bfloat16 instructions: avx512_bf16` / `none (no AVX512-BF16, no AMX)` / `unknown`."""
    if flags is None:
        return "CPU bfloat16 instructions: unknown (no /proc/cpuinfo)"
    return f"CPU bfloat16 instructions: {', '.join(flags) if flags else 'none (no AVX512-BF16, no AMX)'}"
