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
the compute precision (`--peak-size`). The measuring code is `benchmarks.lab.training_jax`
(`python -m benchmarks train` runs it too where JAX is installed).
"""

from __future__ import annotations

import os
import sys

# The checkout, where `benchmarks.lab` (the measuring code) lives.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402

os.environ.setdefault("KERAS_BACKEND", "jax")

from benchmarks.lab.training_jax import POLICIES, measure  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["bert_small", "albert_base"])
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--precision", choices=sorted(POLICIES), default="bfloat16")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (the first one compiles)")
    parser.add_argument("--peak-size", type=int, default=8192, help="side of the square matmul of the peak")
    args = parser.parse_args()
    print(measure(args.configs, args.batch_size, args.precision, args.steps, args.warmup, args.peak_size).markdown())


if __name__ == "__main__":
    main()
