"""Benchmark tables in Markdown, and the dated section a run appends to RESULTS.md.

Example:
    >>> table = Table("Demo", ["name", "seconds"], [["a", "1.0"]], notes=["skipped: tiktoken not installed"])
    >>> print(table.markdown())
    | name | seconds |
    |---|---:|
    | a | 1.0 |
    <BLANKLINE>
    skipped: tiktoken not installed
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

from benchmarks.lab.machine import MachineLabel


@dataclasses.dataclass
class Table:
    """One benchmark table: lines about the setup, the columns and rows, notes (ratios, skipped peers) after it.

    `align` has one letter per column, `l` or `r`; by default the first column is left-aligned, the rest right.

    Example:
        >>> Table("Demo", ["a", "b"], [], align="ll").separator()
        '|---|---|'
    """

    title: str
    columns: list[str]
    rows: list[list[str]]
    setup: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    align: str = ""

    def separator(self) -> str:
        """The Markdown line under the header."""
        align = self.align or "l" + "r" * (len(self.columns) - 1)
        return "|" + "|".join("---:" if letter == "r" else "---" for letter in align) + "|"

    def header(self) -> str:
        """The header and separator lines."""
        return "| " + " | ".join(self.columns) + " |\n" + self.separator()

    @staticmethod
    def row_line(row: Sequence[str]) -> str:
        """One row as a Markdown line."""
        return "| " + " | ".join(row) + " |"

    def markdown(self) -> str:
        """Setup lines, the table, then the notes, separated by blank lines."""
        parts = ["\n".join(self.setup)] if self.setup else []
        parts.append("\n".join([self.header(), *map(self.row_line, self.rows)]))
        if self.notes:
            parts.append("\n".join(self.notes))
        return "\n\n".join(parts)


def section(label: MachineLabel, tables: Sequence[Table]) -> str:
    """A RESULTS.md section: a dated heading, the machine label, then each table under its own heading."""
    parts = [f"## `python -m benchmarks` run, {label.date}", label.markdown()]
    for table in tables:
        parts += [f"### {table.title}", table.markdown()]
    return "\n\n".join(parts) + "\n"


def append_section(path: str | Path, text: str) -> None:
    """Appends `text` to the Markdown file at `path` (created if absent) after a blank line."""
    path = Path(path)
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    blank_line = "" if not existing else ("\n" if existing.endswith("\n") else "\n\n")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(blank_line + text)
