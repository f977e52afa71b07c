"""`python -m benchmarks`: runs the benchmark tables beside the peer libraries installed here, prints them and
appends a dated, machine-labelled section to benchmarks/RESULTS.md. Run it from a tfbert clone.

It is not a `tfbert` subcommand: the measuring code (`benchmarks/lab`) imports torch, keras-hub and
transformers (the `bench` extra), reads the test assets that the clone's `python tests/assets.py` unpacks,
and records into the clone's RESULTS.md; an installed wheel holds none of these (docs/benchmarks.md).

Example:
    python -m benchmarks tokenize --quick --no-record
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from tfbert.cli import OneLineParser

PROGRAM = "python -m benchmarks"
TABLE_NAMES = ("tokenize", "pipeline", "train", "serve")
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def results_path(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Path | None:
    """Where the section goes: `--results`, else benchmarks/RESULTS.md; None with `--no-record`."""
    if args.no_record:
        return None
    path = Path(args.results) if args.results else RESULTS
    if not path.parent.is_dir():
        parser.error(f"cannot record in {str(path)!r}: folder {str(path.parent)!r} does not exist; "
                     "pass --results PATH or --no-record")
    return path


def command_line(args: argparse.Namespace) -> str:
    """The command as typed, rebuilt from the parsed arguments."""
    words = [PROGRAM, args.table]
    if args.quick:
        words.append("--quick")
    if args.only:
        words += ["--only", args.only]
    if args.no_record:
        words.append("--no-record")
    elif args.results:
        words += ["--results", args.results]
    return " ".join(words)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Runs the chosen tables, prints the section and appends it to the results file."""
    path = results_path(args, parser)
    from tfbert.commands.tensorflow_logs import import_tensorflow_quietly

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
            print(f"{PROGRAM}: running {name}{' (quick)' if args.quick else ''} ...", file=sys.stderr, flush=True)
            tables += TABLES[name](args.quick, args.only)
    except MissingAssetError as error:
        parser.error(f"{error} (the benchmarks read the test assets)")
    text = section(label.finish(), tables)
    print(text)
    if path is not None:
        append_section(path, text)
        print(f"recorded in {path}")


def build_parser() -> argparse.ArgumentParser:
    """The parser of `python -m benchmarks` (one-line usage errors, exit status 2, as `tfbert`'s)."""
    parser = OneLineParser(
        prog=PROGRAM, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a benchmark table beside the peer libraries installed on this machine (keras-hub, Hugging "
        "Face tokenizers, sentencepiece, tiktoken; absent ones are skipped with a note), contenders taking turns in "
        "one process so that load on a shared machine hits all alike; print the table with the ratios and append a "
        "section to benchmarks/RESULTS.md: date, CPU model and bfloat16 instructions, cores, load average before and "
        "after, versions, the command. tokenize: MB/s of WordPiece, SentencePiece and byte BPE tokenizers; "
        "pipeline: masked-LM examples/s of tfbert.data beside keras-hub; train: masked-LM training sequences/s "
        "beside keras-hub and Hugging Face PyTorch (each in its own process), and on the JAX backend where JAX is "
        "installed; serve: MiniLM sentence embeddings from the exported SavedModel (strings in) beside Hugging Face "
        "tokenizers + PyTorch, batch-1 latency and batched throughput. The text is the test assets "
        "(`python tests/assets.py` unpacks them). Run from a tfbert clone with the bench extra "
        "(pip install -e '.[bench]').",
        epilog="examples:\n"
        f"  {PROGRAM} tokenize                      # full size, appended to benchmarks/RESULTS.md\n"
        f"  {PROGRAM} all --quick --no-record       # every table, tiny sizes, printed only\n"
        f"  {PROGRAM} pipeline --results my-results.md\n"
        f"  {PROGRAM} tokenize --only WordPiece --no-record\n")
    parser.add_argument("table", choices=(*TABLE_NAMES, "all"), help="which table to run (all: every one)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and few steps: a smoke run in seconds")
    parser.add_argument("--only", default="", metavar="FAMILY",
                        help="tokenize: only the tokenizer families whose name contains this (WordPiece, "
                             "SentencePiece, BPE)")
    parser.add_argument("--results", metavar="PATH",
                        help="the Markdown file to append the section to (default: benchmarks/RESULTS.md)")
    parser.add_argument("--no-record", action="store_true", help="only print, append nothing")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parses `argv` (default: the command line) and runs the tables; returns the exit status (2: a usage error)."""
    parser = build_parser()
    try:
        run(parser.parse_args(argv), parser)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
