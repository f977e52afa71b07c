"""`--jit-compile auto|on|off` for the training commands: whether `fit` compiles its step with XLA.

    >>> parser = argparse.ArgumentParser(prog="tfbert pretrain")
    >>> add_jit_compile_argument(parser, auto="XLA")
    >>> parser.parse_args(["--jit-compile", "off"]).jit_compile
    False
    >>> parser.parse_args([]).jit_compile is None   # the training loop's own default
    True
"""

from __future__ import annotations

import argparse

JIT_COMPILE_VALUES = {"auto": "auto", "on": True, "off": False}
# What `tfbert.finetuning.finetune` does by default: a few epochs on a CPU gain less than the compile costs.
FINETUNE_AUTO_JIT = "off: on a CPU, compiling costs more than a few epochs gain"


def jit_compile_value(text: str) -> bool | str:
    """`auto`, `on` or `off` as `TrainingSettings.jit_compile` takes it: `"auto"`, True or False."""
    if text not in JIT_COMPILE_VALUES:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of auto, on, off")
    return JIT_COMPILE_VALUES[text]


def add_jit_compile_argument(parser: argparse.ArgumentParser, auto: str) -> None:
    """Adds `--jit-compile`; `auto` says what the command does without the flag (or with `auto`)."""
    parser.add_argument("--jit-compile", type=jit_compile_value, metavar="{auto,on,off}",
                        help=f"XLA for the training step: auto ({auto}), on or off; XLA steps run faster once "
                             "compiled, and compiling takes seconds on a CPU")
