"""The `tfbert` command line.

    tfbert quickstart                                # vocabulary, tiny ALBERT, SavedModel, fill-mask (CPU minutes)
    tfbert configs                                   # shipped configs with parameter counts
    tfbert vocab --kind sentencepiece --data corpus.txt --vocab-size 8000 --output vocab/
    tfbert pretrain --config albert_tiny --tokenizer vocab/ --data corpus.txt --steps 1000 --model-dir runs/a
    tfbert finetune --pretrained runs/a --train train.tsv --eval dev.tsv --model-dir runs/cls
    tfbert export runs/cls/best.keras --name sst2 --tokenizer runs/cls/tokenizer --labels negative,positive
    tfbert predict saved_models/sst2 "a gripping film"   # also --file PATH, stdin, --json; fill-mask, embeddings
    tfbert finetune --task embedding --pretrained runs/a --train sts-train.tsv --eval sts-dev.tsv --model-dir runs/sts
    tfbert evaluate sts runs/sts --data sts-test.tsv     # Pearson / Spearman of the cosine
    tfbert distill --teacher all-MiniLM-L6-v2/ --student runs/sts --parallel en-ko.tsv --model-dir runs/ko
    tfbert augment --cross-encoder runs/cross --sentences s.txt --pairs bm25 --output silver.tsv
    tfbert convert {huggingface,tf1,keras-hub} FOLDER -o model.keras [--heads] [--cased|--uncased]
    tfbert convert to-huggingface MODEL -o FOLDER [--tokenizer DIR] [--architecture NAME]
    tfbert info                                      # versions, devices, the strategy `auto` picks

Each subcommand is a module `tfbert/commands/<name>.py` with `add_parser(commands)` (built with
`tfbert.commands.add_command`, ending with `parser.set_defaults(run=run)`) and `run(args)`, which
imports TensorFlow and raises `CommandError` for a user's mistake. Adding a command is one such
module and its name in `COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from tfbert.commands.backend_flag import select_backend
from tfbert.commands.errors import CommandError, one_line
from tfbert.commands.flag_types import check_flag_combinations
from tfbert.interrupts import Interrupted, as_interrupted, received, signals_raise
from tfbert.outputs import OutputRefused

# The subcommands, in the order `tfbert --help` lists them: modules of tfbert.commands.
COMMANDS = ("quickstart", "configs", "vocab", "pretrain", "finetune", "evaluate", "distill", "augment", "export", "predict",
            "info", "convert")


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a usage mistake in one line (`tfbert pretrain: error: argument --steps: ...`), exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The `tfbert` parser with every subcommand of `COMMANDS` (nothing is loaded: TensorFlow comes with `run`)."""
    parser = OneLineParser(prog="tfbert", description="BERT-family encoders for TensorFlow and Keras.",
                           epilog="`tfbert COMMAND --help` describes each command, with examples.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"tfbert.commands.{name}").add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None, *, exiting: bool = False) -> int:
    """Parses `argv` (default: the command line), runs the subcommand, returns the exit status.

    `exiting`: the process ends when `main` returns (`program`), so SIGINT and SIGTERM are ignored
    from the moment the command is done (`signals_raise(then_ignore=True)`).
    """
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    # `tfbert predict MODEL --json a b`: texts after options (argparse gives a `*` positional only its first run).
    intermixed = getattr(args, "intermixed", None)
    if extras and intermixed and not any(extra.startswith("-") and extra != "-" for extra in extras):
        getattr(args, intermixed).extend(extras)
    elif extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    try:
        check_flag_combinations(args)
        if hasattr(args, "backend"):
            select_backend(args, argv, exiting)
        with signals_raise(then_ignore=exiting):
            args.run(args)
    except (CommandError, OutputRefused, OSError) as error:   # OSError: a file the command could not read or write
        if received() is not None:   # a library turned the signal into its own error (SentencePiece's trainer)
            return _interrupted(args.command, received())
        print(f"tfbert {args.command}: error: {one_line(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:   # SIGINT or SIGTERM (tfbert.interrupts)
        return _interrupted(args.command, as_interrupted(error))
    except Exception:   # a signal landed in a library, which raised its own error (pybind11's RuntimeError)
        if received() is None:
            raise
        return _interrupted(args.command, received())
    return 0


def _interrupted(command: str, interrupted: Interrupted) -> int:
    """Prints `tfbert COMMAND: interrupted by SIGINT ...`; returns 128 + the signal's number."""
    print(f"tfbert {command}: {interrupted.message()}", file=sys.stderr)
    return interrupted.exit_status


def program() -> None:
    """The `tfbert` program: `main` on the command line, then the process exits with its status.

    A signal that comes after the command is done (its output in place, or its message printed) is
    ignored, not raised inside TensorFlow's teardown at exit.
    """
    sys.exit(main(exiting=True))


if __name__ == "__main__":
    program()
