"""`--precision auto|fp32|bf16` for the commands that build a model, and showing the choice on stdout."""

from __future__ import annotations

import argparse
import logging
import sys

PRECISION_CHOICES = ("auto", "fp32", "bf16", "float32", "mixed_bfloat16", "mixed_float16")


def add_precision_argument(parser: argparse.ArgumentParser, default: str = "auto", note: str = "") -> None:
    """Adds `--precision` to `parser`; `note` ends its help."""
    parser.add_argument("--precision", default=default, choices=PRECISION_CHOICES,
                        help="auto (bf16 where the hardware runs it faster: TPU, GPU of compute capability 8.0+, "
                             "a CPU with AVX512-BF16 or AMX for models of hidden size 512+; prints which and why; "
                             "a resumed pretraining run keeps its own), fp32 or bf16 (Keras mixed_bfloat16); Keras "
                             "policy names work too" + (f"; {note}" if note else ""))


def show_precision_choice() -> None:
    """Prints the `precision: ... (why)` line `tfbert.distribute.precision` logs, on this run's stdout."""
    logger = logging.getLogger("tfbert.distribute.precision")
    logger.handlers = [logging.StreamHandler(sys.stdout)]
    logger.propagate = False
    logger.setLevel(logging.INFO)
