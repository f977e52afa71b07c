"""Rebuild `web.txt.gz`, the bundled English corpus, from Debian's `sword-text-web` package.

    python -m tfbert.corpus.build                      # apt-get download sword-text-web, then build
    python -m tfbert.corpus.build --module DIR         # an unpacked engWEB2015eb module folder

The World English Bible (public domain; module engWEB2015eb, SWORD version 426.0-1 in Debian
bookworm) is read with `tfbert.data.sword`. Only the 66 protocanonical books are kept (Genesis to
Revelation, in the KJV versification's order). Each chapter is one document; its verses are
joined and split into sentences, a sentence a line, with a blank line between documents (the
layout `tfbert.data.text_line_documents` reads). Footnotes, section headings and the glossary are
dropped by `strip_markup`; the wording of the verses is unchanged. The output is gzip-compressed
with a fixed modification time, so a rebuild from the same package gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import io
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from tfbert.data.sword import ZTextModule, versification

MODULE = "engWEB2015eb"
PACKAGE = "sword-text-web"
OUTPUT = Path(__file__).with_name("web.txt.gz")
_SENTENCE_END = re.compile(r"""(?<=[.!?])(["'\u201d\u2019)\]]*)\s+(?=["'\u201c\u2018(\[]*[A-Z0-9])""")


def split_sentences(text: str) -> list[str]:
    """Split after `.`, `!` or `?` (and closing quotes) when the next word starts with a capital or digit."""
    pieces = _SENTENCE_END.sub(lambda match: match.group(1) + "\n", text)
    return [piece.strip() for piece in pieces.split("\n") if piece.strip()]


def chapters(module: ZTextModule):
    """`(book, chapter, text)` for each chapter of the protocanonical books, in canonical order."""
    protocanon = {book for testament in versification("KJV").values() for book, _ in testament}
    current, verses = None, []
    for verse in module.verses():
        if verse.book not in protocanon:
            continue
        key = (verse.book, verse.chapter)
        if key != current and verses:
            yield (*current, " ".join(verses))
            verses = []
        current = key
        verses.append(verse.text)
    if verses:
        yield (*current, " ".join(verses))


def build(module_dir: str | Path, output: str | Path = OUTPUT) -> dict[str, int]:
    """Writes the corpus; returns counts of documents, sentences, characters and compressed bytes."""
    module = ZTextModule(module_dir, versification="NRSVA")
    counts = {"documents": 0, "sentences": 0, "characters": 0}
    text = io.StringIO()
    for _, _, chapter_text in chapters(module):
        sentences = split_sentences(chapter_text)
        text.write("\n".join(sentences) + "\n\n")
        counts["documents"] += 1
        counts["sentences"] += len(sentences)
        counts["characters"] += sum(len(sentence) for sentence in sentences)
    data = text.getvalue().encode("utf-8")
    with open(output, "wb") as raw, gzip.GzipFile(filename="web.txt", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as zipped:
        zipped.write(data)
    counts["compressed_bytes"] = Path(output).stat().st_size
    return counts


def download_module(work: Path) -> Path:
    """`apt-get download sword-text-web` and unpack it under `work`; returns the module folder."""
    if not (shutil.which("apt-get") and shutil.which("dpkg-deb")):
        raise RuntimeError("building the corpus needs apt-get and dpkg-deb, or --module pointing at an unpacked module")
    subprocess.run(["apt-get", "download", PACKAGE], cwd=work, check=True)
    (deb,) = work.glob("*.deb")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "root")], check=True)
    return work / "root" / "usr/share/sword/modules/texts/ztext" / MODULE


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", help=f"unpacked {MODULE} module folder (default: download {PACKAGE})")
    parser.add_argument("--output", default=str(OUTPUT))
    args = parser.parse_args(argv)
    if args.module:
        counts = build(args.module, args.output)
    else:
        with tempfile.TemporaryDirectory() as work:
            counts = build(download_module(Path(work)), args.output)
    print(", ".join(f"{value:,} {name}" for name, value in counts.items()), "->", args.output)


if __name__ == "__main__":
    main()
