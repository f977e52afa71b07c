"""MkDocs hook: the benchmarks page gets every current table in `benchmarks/results/*.md`.

Each benchmark records its current table as one Markdown file there (command, machine, date, table);
the page lists them all at build time, so a new benchmark file shows up without editing the page.
The dated history lives in `benchmarks/history/` and is not part of the site.
"""

from __future__ import annotations

import re
from pathlib import Path

PAGE = "benchmarks.md"
MARKER = "<!-- current tables -->"


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Replaces the marker line of `benchmarks.md` with the recorded tables."""
    if page.file.src_uri != PAGE:
        return markdown
    results = Path(config.config_file_path).parent / "benchmarks" / "results"
    return markdown.replace(MARKER, current_tables(results))


def current_tables(folder: Path) -> str:
    """Every `*.md` in `folder`, in name order, its headings moved one level down under the page's."""
    pages = sorted(folder.glob("*.md"))
    if not pages:
        raise FileNotFoundError(f"no recorded benchmark tables in {folder}")
    return "\n\n".join(demote(path.read_text(encoding="utf-8")) for path in pages)


def demote(text: str) -> str:
    """`# Title` becomes `## Title` (and so on), outside fenced code."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,5} ", line):
            line = "#" + line
        lines.append(line)
    return "\n".join(lines)
