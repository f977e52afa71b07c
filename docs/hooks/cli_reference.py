"""MkDocs hook: the CLI reference page, written at build time from the argparse parsers of `tfbert`.

Each command's module adds its parser (`tfbert.cli.COMMANDS`); this walks them, subcommands included,
and prints each `--help` as the command prints it, so the page cannot drift from the code.
"""

from __future__ import annotations

import argparse
import importlib
import os

from mkdocs.structure.files import File, Files

PAGE = "cli.md"


def on_files(files: Files, config) -> Files:
    """Adds the generated `cli.md` to the site's files."""
    files.append(File.generated(config, PAGE, content=cli_reference()))
    return files


def cli_reference() -> str:
    """The whole page: an index of the commands, then each command's help."""
    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal's width; fix it for a stable page
    parser = tfbert_parser()
    sections = list(walk(parser, "tfbert"))
    index = "\n".join(f"- [`{name}`](#{anchor(name)}): {summary}" for name, summary, _ in sections[1:])
    body = "\n\n".join(f"## `{name}`\n\n```text\n{text.rstrip()}\n```" for name, _, text in sections)
    return ("# CLI reference\n\nGenerated from the parsers in `tfbert/commands/` when the site is built; "
            "`tfbert COMMAND --help` prints the same text.\n\n" + index + "\n\n" + body + "\n")


def tfbert_parser() -> argparse.ArgumentParser:
    """The parser `tfbert.cli.main` builds: one subcommand per module named in `COMMANDS`."""
    from tfbert import cli

    parser = argparse.ArgumentParser(prog="tfbert", description="BERT-family encoders for TensorFlow and Keras.",
                                     epilog="`tfbert COMMAND --help` describes each command, with examples.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in cli.COMMANDS:
        importlib.import_module(f"tfbert.commands.{name}").add_parser(commands)
    return parser


def walk(parser: argparse.ArgumentParser, name: str, summary: str = ""):
    """Yields (command line, one-line summary, help text) for the parser and every subparser below it."""
    yield name, summary, parser.format_help()
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            summaries = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for sub_name, sub_parser in action.choices.items():
                yield from walk(sub_parser, f"{name} {sub_name}", summaries.get(sub_name, ""))


def anchor(title: str) -> str:
    """The id MkDocs' toc extension gives the heading "`title`"."""
    return "-".join(title.lower().split())
