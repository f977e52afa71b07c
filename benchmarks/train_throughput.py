"""Masked-LM training throughput: tfbert beside keras-hub and Hugging Face (PyTorch), same batches, one run.

    python benchmarks/train_throughput.py                    # BERT-small and ALBERT-base, CPU
    python benchmarks/train_throughput.py --steps 10 --batch-size 32

Every framework trains the same configuration (tfbert's `bert_small` and
`albert_base` configs) on the same random batches of length 128 with 20 masked
positions, with Adam, dropout as configured, float32 on the CPU. Keras models
compile their train step with XLA (`jit_compile=True`), PyTorch runs eagerly.
tfbert also trains its NSP/SOP head; keras-hub's `*MaskedLM` and Hugging Face's
`*ForMaskedLM` train MLM only, so tfbert does slightly more work per step.
Hugging Face's `*ForMaskedLM` computes logits at every position, the others only
at the masked ones; tfbert also runs its last layer only at the masked positions
and the first token. Each measurement runs in its own process. Prints sequences
per second (median of the timed steps), tfbert's ratios, and each framework's
share of this machine's matmul peak: the step's matmul FLOPs (counted from the
config: forward, times 3 for the backward pass) per second, over the FLOP/s of
one large XLA-compiled float32 matmul measured in the same run. The measuring code is
`benchmarks.lab.training` (`python -m benchmarks train` runs it too and records the result).
"""

from __future__ import annotations

import os
import sys

# The checkout, where `benchmarks.lab` (the measuring code) lives.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from benchmarks.lab import training  # noqa: E402
from benchmarks.lab.training import keras_hub_step  # noqa: E402,F401  (precision.py imports it from here)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["bert_small", "albert_base"])
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    print(training.measure(args.configs, args.batch_size, args.steps, args.warmup).markdown())


if __name__ == "__main__":
    main()
