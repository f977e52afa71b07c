"""The code blocks of README.md and the pages in docs/, as the docs tests run them.

A ```python or ```bash block runs; `<!-- skip: reason -->` on the line right before its fence skips it.
`python tests/docs/guide_blocks.py` lists every skipped block with its reason.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ("python", "bash")
SKIP = re.compile(r"^<!-- skip: (?P<reason>.*\S) -->$")
FENCE = re.compile(r"^```(?P<language>[\w-]*)\s*$")


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced block: the page, the line of its opening fence, its language, code and skip reason."""

    page: str
    line: int
    language: str
    code: str
    skip: str | None

    @property
    def runs(self) -> bool:
        return self.language in RUN and self.skip is None


def pages() -> list[Path]:
    """README.md and every Markdown page of the site's source, in name order."""
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one page, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        skip = SKIP.match(lines[index - 1]) if index else None
        found.append(Block(str(path.relative_to(ROOT)), index + 1, opening["language"],
                           "\n".join(lines[index + 1:end]) + "\n", skip["reason"] if skip else None))
        index = end + 1
    return found


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in blocks(path)]


if __name__ == "__main__":
    every = [block for block in all_blocks() if block.language in RUN]
    skipped = [block for block in every if block.skip]
    for block in skipped:
        print(f"{block.page}:{block.line}: {block.skip}")
    print(f"{len(every) - len(skipped)} blocks run, {len(skipped)} skipped")
