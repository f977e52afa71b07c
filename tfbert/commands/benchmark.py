"""`tfbert benchmark`: runs the benchmark tables beside the peer libraries installed here, prints them and
appends a dated, machine-labelled section to RESULTS.md.

The measuring code (`benchmarks/lab`) is not part of the installed package: it imports torch, keras-hub
and transformers. The command finds it in the checkout tfbert runs from (an editable install).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tfbert.commands import add_command
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly

TABLE_NAMES = ("tokenize", "pipeline", "train", "serve")


def checkout() -> Path:
    """The folder holding the `tfbert` package tfbert runs from: the checkout, for an editable install."""
    import tfbert

    return Path(tfbert.__file__).resolve().parents[1]


def checkout_results() -> Path:
    """`benchmarks/RESULTS.md` of the checkout tfbert runs from (an editable install)."""
    return checkout() / "benchmarks" / "RESULTS.md"


def import_lab() -> None:
    """Puts the checkout on `sys.path` so that `benchmarks.lab` imports; `CommandError` when there is none."""
    root = checkout()
    if not (root / "benchmarks" / "lab" / "__init__.py").is_file():
        raise CommandError(f"the benchmark lab is not installed with tfbert (no benchmarks/lab beside {root / 'tfbert'}); "
                           "run it from a checkout: git clone the tfbert repository, pip install -e '.[bench]' "
                           "there, and run tfbert benchmark again")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))


def results_path(args: argparse.Namespace) -> Path | None:
    """Where the section goes: `--results`, else the checkout's RESULTS.md; None with `--no-record`."""
    if args.no_record:
        return None
    path = Path(args.results) if args.results else checkout_results()
    if not path.parent.is_dir():
        hint = "" if args.results else " (tfbert is not run from a checkout)"
        raise CommandError(f"cannot record in {str(path)!r}: folder {str(path.parent)!r} does not exist{hint}; "
                           "pass --results PATH or --no-record")
    return path


def command_line(args: argparse.Namespace) -> str:
    """The command as typed, rebuilt from the parsed arguments."""
    words = ["tfbert", "benchmark", args.table]
    if args.quick:
        words.append("--quick")
    if args.only:
        words += ["--only", args.only]
    if args.no_record:
        words.append("--no-record")
    elif args.results:
        words += ["--results", args.results]
    return " ".join(words)


def run(args: argparse.Namespace) -> None:
    """Runs the chosen tables, prints the section and appends it to the results file."""
    import_lab()
    path = results_path(args)
    import_tensorflow_quietly()
    from benchmarks.lab.assets import MissingAssetError
    from benchmarks.lab.machine import MachineLabel
    from benchmarks.lab.report import append_section, section
    from benchmarks.lab.suite import TABLES

    label = MachineLabel.now(command_line(args))
    names = list(TABLES) if args.table == "all" else [args.table]
    tables = []
    try:
        for name in names:
            print(f"tfbert benchmark: running {name}{' (quick)' if args.quick else ''} ...", file=sys.stderr, flush=True)
            tables += TABLES[name](args.quick, args.only)
    except MissingAssetError as error:
        raise CommandError(f"{error} (the benchmarks read the test assets)") from None
    text = section(label.finish(), tables)
    print(text)
    if path is not None:
        append_section(path, text)
        print(f"recorded in {path}")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `benchmark` subcommand to `tfbert`'s subparsers."""
    parser = add_command(
        commands, "benchmark", "measure tokenizers, input pipeline, training and serving beside the installed peer libraries",
        "Run a benchmark table beside the peer libraries installed on this machine (keras-hub, Hugging Face "
        "tokenizers, sentencepiece, tiktoken; absent ones are skipped with a note), contenders taking turns in one "
        "process so that load on a shared machine hits all alike; print the table with the ratios and append a "
        "section to RESULTS.md: date, CPU model and bfloat16 instructions, cores, load average before and after, "
        "versions, the command. tokenize: MB/s of WordPiece, SentencePiece and byte BPE tokenizers; pipeline: "
        "masked-LM examples/s of tfbert.data beside keras-hub; train: masked-LM training sequences/s beside "
        "keras-hub and Hugging Face PyTorch (each in its own process), and on the JAX backend where JAX is "
        "installed; serve: MiniLM sentence embeddings from the exported SavedModel (strings in) beside Hugging "
        "Face tokenizers + PyTorch, batch-1 latency and batched throughput. The text is the test assets "
        "(`python tests/assets.py` unpacks them).",
        "  tfbert benchmark tokenize                      # full size, appended to benchmarks/RESULTS.md\n"
        "  tfbert benchmark all --quick --no-record       # every table, tiny sizes, printed only\n"
        "  tfbert benchmark pipeline --results my-results.md\n"
        "  tfbert benchmark tokenize --only WordPiece --no-record\n")
    parser.add_argument("table", choices=(*TABLE_NAMES, "all"), help="which table to run (all: every one)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and few steps: a smoke run in seconds")
    parser.add_argument("--only", default="", metavar="FAMILY",
                        help="tokenize: only the tokenizer families whose name contains this (WordPiece, SentencePiece, BPE)")
    parser.add_argument("--results", metavar="PATH",
                        help="the Markdown file to append the section to (default: benchmarks/RESULTS.md of the checkout)")
    parser.add_argument("--no-record", action="store_true", help="only print, append nothing")
    parser.set_defaults(run=run)
    return parser
