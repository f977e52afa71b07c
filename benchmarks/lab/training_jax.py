"""Masked-LM training throughput of tfbert's models on the JAX backend (bfloat16 on an accelerator).

The model code is `keras.ops` only, so the same `PretrainingModel` that trains with TensorFlow
trains here with JAX; this module imports no TensorFlow, so it runs where only JAX is installed.
Each config trains MLM + NSP/SOP on random batches of length 128 with 20 masked positions, Adam,
dropout as configured, the train step compiled by XLA, under the Keras policy `mixed_bfloat16`
or `float32`. The table gives sequences per second (median of the timed steps) and the share of
the measured matmul peak (the best of 20 runs of one XLA-compiled square matmul in the compute
precision). `measure_in_subprocess` runs it with `KERAS_BACKEND=jax` from a TensorFlow process.

Example:
    >>> table = measure_in_subprocess(["bert_tiny"], 4, "float32", steps=2, warmup=1, peak_size=512)  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import time

from benchmarks.lab import CHECKOUT
from benchmarks.lab.report import Table

POLICIES = {"bfloat16": "mixed_bfloat16", "float32": "float32"}


def measured_matmul_peak(size: int, dtype: str) -> float:
    """FLOP/s of an XLA-compiled [size, size] x [size, size] matmul in `dtype`, the best of 20 runs."""
    import jax
    import jax.numpy as jnp

    from benchmarks.lab.timing import seconds

    keys = jax.random.split(jax.random.PRNGKey(0))
    a, b = (jax.random.normal(key, (size, size), dtype=dtype) for key in keys)
    matmul = jax.jit(jnp.matmul)
    matmul(a, b).block_until_ready()
    best = min(seconds(lambda: matmul(a, b).block_until_ready()) for _ in range(20))
    return 2 * size**3 / best


def measure(configs: list[str], batch_size: int, precision: str, steps: int, warmup: int, peak_size: int) -> Table:
    """The JAX table, measured in this process (its Keras backend must be JAX)."""
    import jax
    import keras

    from benchmarks.lab.throughput import LENGTH, PREDICTIONS, make_batch, matmul_flops, tfbert_step
    from benchmarks.lab.timing import time_steps
    from tfbert.config import load_config

    if keras.backend.backend() != "jax":
        raise SystemExit(f"KERAS_BACKEND is {keras.backend.backend()!r}: run with KERAS_BACKEND=jax")
    keras.mixed_precision.set_global_policy(POLICIES[precision])
    device = jax.devices()[0]
    peak = measured_matmul_peak(peak_size, precision)
    table = Table("Masked-LM training throughput on JAX",
                  ["model", "sequences/s", "step ms", "matmul TFLOP/s", "share of matmul peak"], [], setup=[
                      f"# {device.device_kind} ({device.platform}), {platform.machine()} host, JAX {jax.__version__}, "
                      f"Keras {keras.__version__}, {precision}, batch {batch_size} x length {LENGTH}, "
                      f"{PREDICTIONS} predictions, median of {steps} steps after {warmup} warm-up; measured "
                      f"{precision} matmul peak {peak / 1e12:.2f} TFLOP/s; {time.strftime('%Y-%m-%d')}"])
    for config_name in configs:
        batch = make_batch(load_config(config_name).encoder.vocab_size, batch_size)
        rate = time_steps(tfbert_step(config_name, batch), steps, warmup, batch_size)
        flops = rate / batch_size * matmul_flops(config_name, batch_size, "tfbert")
        table.rows.append([config_name, f"{rate:.1f}", f"{1000 * batch_size / rate:.1f}", f"{flops / 1e12:.2f}",
                           f"{flops / peak:.0%}"])
    return table


def measure_in_subprocess(configs: list[str], batch_size: int, precision: str, steps: int, warmup: int,
                          peak_size: int) -> Table:
    """`measure` in a fresh process with `KERAS_BACKEND=jax` (this one's Keras backend is fixed at import)."""
    command = [sys.executable, "-m", "benchmarks.lab.training_jax", "--configs", *configs,
               "--batch-size", str(batch_size), "--precision", precision, "--steps", str(steps),
               "--warmup", str(warmup), "--peak-size", str(peak_size)]
    result = subprocess.run(command, capture_output=True, text=True, check=False, cwd=CHECKOUT,
                            env={**os.environ, "KERAS_BACKEND": "jax"})
    if result.returncode != 0:
        raise RuntimeError(f"the JAX training table failed:\n{result.stderr[-3000:]}")
    return Table(**json.loads(result.stdout.strip().splitlines()[-1]))


def main() -> None:
    """Prints the JAX table as one line of JSON (what `measure_in_subprocess` reads)."""
    parser = argparse.ArgumentParser(description="tfbert's MLM training throughput on JAX, as JSON")
    parser.add_argument("--configs", nargs="+", required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--precision", choices=sorted(POLICIES), required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--warmup", type=int, required=True)
    parser.add_argument("--peak-size", type=int, required=True)
    args = parser.parse_args()
    table = measure(args.configs, args.batch_size, args.precision, args.steps, args.warmup, args.peak_size)
    print(json.dumps(dataclasses.asdict(table)))


if __name__ == "__main__":
    main()
