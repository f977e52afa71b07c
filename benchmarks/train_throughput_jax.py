"""Masked-LM training throughput of tfbert's models on the JAX backend, in bfloat16, on an accelerator.

    KERAS_BACKEND=jax python benchmarks/train_throughput_jax.py                  # BERT-small, ALBERT-base
    KERAS_BACKEND=jax python benchmarks/train_throughput_jax.py --configs bert_base --batch-size 256
    KERAS_BACKEND=jax python benchmarks/train_throughput_jax.py --precision float32 --batch-size 8   # a CPU check

The model code is `keras.ops` only, so the same `PretrainingModel` that trains with TensorFlow
trains here with JAX; this script imports no TensorFlow and runs where only JAX is installed (the
GPU machine). Each config trains MLM + NSP/SOP on random batches of length 128 with 20 masked
positions (`throughput_common.make_batch`), Adam, dropout as configured, the train step compiled
by XLA (`jit_compile=True`), under the Keras policy `mixed_bfloat16` (float32 variables, bfloat16
matmuls) or `float32`. Prints sequences per second (median of the timed steps; the loss is read
back every step, so each step is finished before the next is timed) and the share of the
measured matmul peak: the step's matmul FLOPs counted from the config (`matmul_flops`, forward
x 3) per second, over the FLOP/s of the best of 20 runs of one XLA-compiled square matmul in
the compute precision (`--peak-size`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# benchmarks/tokenize.py would shadow the standard library's tokenize: look here last.
_HERE = str(Path(__file__).resolve().parent)
sys.path = [entry for entry in sys.path if entry not in (_HERE, "")] + [_HERE]
os.environ.setdefault("KERAS_BACKEND", "jax")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras  # noqa: E402

from tfbert.config import load_config  # noqa: E402
from throughput_common import (LENGTH, PREDICTIONS, make_batch, matmul_flops, seconds,  # noqa: E402
                               tfbert_step, time_steps)

POLICIES = {"bfloat16": "mixed_bfloat16", "float32": "float32"}


def measured_matmul_peak(size: int, dtype: str) -> float:
    """FLOP/s of an XLA-compiled [size, size] x [size, size] matmul in `dtype`, the best of 20 runs."""
    keys = jax.random.split(jax.random.PRNGKey(0))
    a, b = (jax.random.normal(key, (size, size), dtype=dtype) for key in keys)
    matmul = jax.jit(jnp.matmul)
    matmul(a, b).block_until_ready()
    best = min(seconds(lambda: matmul(a, b).block_until_ready()) for _ in range(20))
    return 2 * size**3 / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["bert_small", "albert_base"])
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--precision", choices=sorted(POLICIES), default="bfloat16")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (the first one compiles)")
    parser.add_argument("--peak-size", type=int, default=8192, help="side of the square matmul of the peak")
    args = parser.parse_args()
    if keras.backend.backend() != "jax":
        raise SystemExit(f"KERAS_BACKEND is {keras.backend.backend()!r}: run with KERAS_BACKEND=jax")

    keras.mixed_precision.set_global_policy(POLICIES[args.precision])
    device = jax.devices()[0]
    peak = measured_matmul_peak(args.peak_size, args.precision)
    print(f"# {device.device_kind} ({device.platform}), {platform.machine()} host, JAX {jax.__version__}, "
          f"Keras {keras.__version__}, {args.precision}, batch {args.batch_size} x length {LENGTH}, "
          f"{PREDICTIONS} predictions, median of {args.steps} steps after {args.warmup} warm-up; measured "
          f"{args.precision} matmul peak {peak / 1e12:.2f} TFLOP/s; {time.strftime('%Y-%m-%d')}")
    print("| model | sequences/s | step ms | matmul TFLOP/s | share of matmul peak |")
    print("|---|---:|---:|---:|---:|")
    for config_name in args.configs:
        batch = make_batch(load_config(config_name).encoder.vocab_size, args.batch_size)
        rate = time_steps(tfbert_step(config_name, batch), args.steps, args.warmup, args.batch_size)
        flops = rate / args.batch_size * matmul_flops(config_name, args.batch_size, "tfbert")
        print(f"| {config_name} | {rate:.1f} | {1000 * args.batch_size / rate:.1f} | {flops / 1e12:.2f} | "
              f"{flops / peak:.0%} |", flush=True)


if __name__ == "__main__":
    main()
