"""`tfbert` subcommands that need more than a few lines; each imports TensorFlow only when it runs."""

from __future__ import annotations

import argparse
import textwrap


def add_command(commands: argparse._SubParsersAction, name: str, help: str, description: str,
                examples: str) -> argparse.ArgumentParser:
    """A subcommand whose `--help` shows `description` (wrapped) and then `examples` as written."""
    description = textwrap.fill(" ".join(description.split()), 100, break_on_hyphens=False)
    epilog = "examples:\n" + textwrap.indent(textwrap.dedent(examples).strip("\n"), "  ") + "\n"
    return commands.add_parser(name, help=help, description=description, epilog=epilog,
                               formatter_class=argparse.RawDescriptionHelpFormatter)


def add_overwrite_argument(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """`--overwrite`: replace an existing output, which a command otherwise refuses (see `tfbert.outputs`)."""
    parser.add_argument("--overwrite", action="store_true",
                        help=help or "replace an existing output, whole, once the new one is complete; without it "
                                     "an existing output is refused and left unchanged")
