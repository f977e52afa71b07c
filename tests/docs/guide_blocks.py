"""The code blocks of README.md and the pages in docs/, as the docs tests run them.

A ```python or ```bash block runs; `<!-- skip: reason -->` right above its fence skips it. `<!-- install: NAME -->`
right above a fence names an install route (docs/distributed.md), which `.ci/install_routes` runs in a fresh
environment; the two markers may stand on consecutive lines above one fence, in either order.
`python tests/docs/guide_blocks.py` lists every skipped block with its reason;
`python tests/docs/guide_blocks.py --install NAME` prints the code of the route NAME (stdlib only: CI runs it before
any environment exists).
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ("python", "bash")
MARKER = re.compile(r"^<!-- (?P<key>skip|install): (?P<value>.*\S) -->$")
INSTALL_PAGE = ROOT / "docs" / "distributed.md"
FENCE = re.compile(r"^```(?P<language>[\w-]*)\s*$")


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced block: the page, the line of its opening fence, its language, code, skip reason and install route."""

    page: str
    line: int
    language: str
    code: str
    skip: str | None
    install: str | None = None

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
        markers = _markers(lines[:index])
        page = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        found.append(Block(str(page), index + 1, opening["language"], "\n".join(lines[index + 1:end]) + "\n",
                           markers.get("skip"), markers.get("install")))
        index = end + 1
    return found


def _markers(above: list[str]) -> dict[str, str]:
    """The markers on the consecutive lines right above a fence (`above`: the page's lines before it)."""
    found = {}
    for line in reversed(above):
        marker = MARKER.match(line)
        if not marker or marker["key"] in found:
            break
        found[marker["key"]] = marker["value"]
    return found


def install_block(name: str, path: Path = INSTALL_PAGE) -> Block:
    """The block right after `<!-- install: NAME -->` on `path` (KeyError naming the routes there if none)."""
    routes = {block.install: block for block in blocks(path) if block.install}
    if name not in routes:
        raise KeyError(f"{path.name} has no block after <!-- install: {name} -->; its routes: {sorted(routes)}")
    return routes[name]


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in blocks(path)]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--install"]:
        try:
            print(install_block(sys.argv[2]).code, end="")
        except KeyError as error:
            sys.exit(error.args[0])
        sys.exit()
    every = [block for block in all_blocks() if block.language in RUN]
    skipped = [block for block in every if block.skip]
    for block in skipped:
        print(f"{block.page}:{block.line}: {block.skip}")
    print(f"{len(every) - len(skipped)} blocks run, {len(skipped)} skipped")
