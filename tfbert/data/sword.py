"""Read SWORD zText Bible modules (as Debian's `sword-text-*` packages ship them) as plain-text verses.

A zText module folder (`usr/share/sword/modules/texts/ztext/<module>/`) holds, per testament
(`ot`, `nt`), three files:

* `.bzz`: the text, cut into blocks (a book each for `BlockType=BOOK`), each zlib-compressed;
* `.bzs`: one 12-byte record per block: offset and length in `.bzz`, uncompressed length
  (little-endian uint32s);
* `.bzv`: one 10-byte record per index slot: block number, offset in the uncompressed block
  (uint32s) and byte length (uint16); length 0 means an empty slot.

Index slots follow the module's versification: two slots of testament headers, then for each
book a book-introduction slot and, for each chapter, a chapter-heading slot followed by one slot
per verse. The chapter and verse counts are data (`tfbert.data._versification`: KJV, NRSVA).
Verse text is OSIS or ThML markup; `strip_markup` turns it into plain text (footnotes and
non-canonical headings dropped, Strong's tags unwrapped).

Everything streams: `verses` decompresses one block at a time and yields verses in canonical
order. Aligning two modules of the same versification is a zip of two streams; only modules of
different versifications make `aligned_verses` hold one side in a dict.

Example:
    >>> kjv = ZTextModule("ztext/engKJV2006eb")      # .../modules/texts/ztext/engKJV2006eb
    >>> next(kjv.verses())
    Verse(reference='Gen.1.1', book='Gen', chapter=1, verse=1, text='In the beginning God created the heaven and the earth.')
    >>> pairs = aligned_verses(kjv, ZTextModule("ztext/spaRV1909eb"))   # (reference, en, es)
    >>> write_parallel(pairs, "bible.en", "bible.es")
    31084
"""

from __future__ import annotations

import configparser
import dataclasses
import html
import os
import re
import struct
import zlib
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from tfbert.data._versification import TABLES

TESTAMENTS = ("ot", "nt")
_BLOCK_RECORD = struct.Struct("<III")
_VERSE_RECORDS = {10: struct.Struct("<IIH"), 12: struct.Struct("<III")}  # zText, zText4

_NOTE = re.compile(r"<note\b[^>]*?(?:/>|>.*?</note>)", re.S)
_HEADING = re.compile(r"<title\b(?![^>]*canonical=\"true\")[^>]*?(?:/>|>.*?</title>)", re.S)
_TAG = re.compile(r"<[^>]*>")
# Back or front matter (a glossary, an introduction) that a module stores after a book's last verse.
_MATTER = re.compile(r"<div\b[^>]*\btype=\"(?:glossary|back|front|introduction|preface|x-other)\"[^>]*>.*", re.S)
_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCTUATION = re.compile(r" ([,.;:!?])")


@dataclasses.dataclass(frozen=True)
class Verse:
    """One verse: its OSIS reference (`Gen.1.1`), book id, chapter, verse number and plain text."""

    reference: str
    book: str
    chapter: int
    verse: int
    text: str


def strip_markup(markup: str) -> str:
    """OSIS/ThML verse markup -> plain text: notes and section headings dropped, tags removed.

    >>> strip_markup('<w lemma="strong:H0430">God</w><note>a note</note> said, <title>Heading</title>“Let')
    'God said, “Let'
    >>> strip_markup('Amen. <div sID="g1" type="glossary"/> Abba is a word.')
    'Amen.'
    """
    text = _HEADING.sub(" ", _NOTE.sub(" ", _MATTER.sub("", markup)))
    text = html.unescape(_TAG.sub("", text))
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", _SPACE.sub(" ", text)).strip()


def versification(name: str) -> dict[str, list[tuple[str, list[int]]]]:
    """`{"ot": [(book, [verses per chapter, ...]), ...], "nt": [...]}` of a versification (KJV, NRSVA)."""
    key = name.upper()
    if key not in TABLES:
        raise ValueError(f"versification {name!r} is not tabulated; known: {', '.join(TABLES)}")
    books: dict[str, list[tuple[str, list[int]]]] = {testament: [] for testament in TESTAMENTS}
    for line in TABLES[key].strip().splitlines():
        testament, book, *counts = line.split()
        books[testament].append((book, [int(count) for count in counts]))
    return books


def read_module_conf(module_dir: str | os.PathLike) -> dict[str, str]:
    """The module's `mods.d/*.conf` entries (found beside `modules/` by its `DataPath`), or `{}`."""
    module_dir = Path(module_dir).resolve()
    for parent in module_dir.parents:
        mods_d = parent / "mods.d"
        if mods_d.is_dir():
            for conf_file in sorted(mods_d.glob("*.conf")):
                parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
                parser.optionxform = str
                try:
                    parser.read_string(conf_file.read_text(encoding="utf-8", errors="replace"))
                except configparser.Error:
                    continue
                for section in parser.sections():
                    data_path = parser[section].get("DataPath", "").strip().rstrip("/")
                    if data_path and (parent / data_path).resolve() == module_dir:
                        return {"Name": section, **dict(parser[section])}
            break
    return {}


class ZTextModule:
    """A SWORD zText (or zText4) Bible module folder.

    Args:
        path: the module folder holding `ot.bzs`, `ot.bzv`, `ot.bzz`, `nt.*`.
        versification: `"KJV"` or `"NRSVA"`; default: the module's conf file's
            `Versification` when it can be found, else KJV.
    """

    def __init__(self, path: str | os.PathLike, versification: str | None = None):
        self.path = Path(path)
        if not self.path.is_dir():
            raise FileNotFoundError(f"SWORD module folder {str(self.path)!r} does not exist")
        self.conf = read_module_conf(self.path)
        self.name = self.conf.get("Name", self.path.name)
        self.versification = (versification or self.conf.get("Versification") or "KJV").upper()
        self.language = self.conf.get("Lang")
        self._books = globals()["versification"](self.versification)
        for testament in TESTAMENTS:
            if not (self.path / f"{testament}.bzv").exists():
                raise FileNotFoundError(f"{self.path} has no {testament}.bzv; is it a zText module?")

    def __repr__(self) -> str:
        return f"ZTextModule({self.name!r}, versification={self.versification!r})"

    def raw_entries(self, testament: str) -> Iterator[tuple[int, str]]:
        """`(slot index, markup)` of every non-empty slot of one testament, in index order."""
        base = self.path / testament
        blocks_data = (base.with_suffix(".bzs")).read_bytes()
        blocks = [_BLOCK_RECORD.unpack_from(blocks_data, i) for i in range(0, len(blocks_data), _BLOCK_RECORD.size)]
        record_size = 12 if self.conf.get("ModDrv", "").lower() == "ztext4" else 10
        record = _VERSE_RECORDS[record_size]
        cached_number, cached_block = -1, b""
        with open(base.with_suffix(".bzv"), "rb") as index, open(base.with_suffix(".bzz"), "rb") as text:
            slot = 0
            while chunk := index.read(record.size):
                if len(chunk) < record.size:
                    break
                block_number, offset, size = record.unpack(chunk)
                if size and block_number < len(blocks):
                    if block_number != cached_number:
                        start, compressed, _ = blocks[block_number]
                        text.seek(start)
                        cached_number, cached_block = block_number, zlib.decompress(text.read(compressed))
                    markup = cached_block[offset:offset + size].decode("utf-8", errors="replace")
                    yield slot, markup.rstrip("\x00")
                slot += 1

    def _slot_references(self, testament: str) -> dict[int, tuple[str, int, int]]:
        """Slot index -> (book, chapter, verse) for the verse slots of one testament."""
        references, slot = {}, 2
        for book, chapters in self._books[testament]:
            slot += 1  # book introduction
            for chapter, num_verses in enumerate(chapters, start=1):
                slot += 1  # chapter heading
                for verse in range(1, num_verses + 1):
                    references[slot] = (book, chapter, verse)
                    slot += 1
        return references

    def verses(self, *, include_empty: bool = False) -> Iterator[Verse]:
        """Every verse in canonical order as plain text (empty ones skipped unless `include_empty`)."""
        for testament in TESTAMENTS:
            references = self._slot_references(testament)
            texts = ((slot, strip_markup(markup)) for slot, markup in self.raw_entries(testament) if slot in references)
            if include_empty:
                present = dict(texts)
                for slot in sorted(references):
                    yield self._verse(references[slot], present.get(slot, ""))
                continue
            for slot, text in texts:
                if text:
                    yield self._verse(references[slot], text)

    @staticmethod
    def _verse(reference: tuple[str, int, int], text: str) -> Verse:
        book, chapter, verse = reference
        return Verse(f"{book}.{chapter}.{verse}", book, chapter, verse, text)


def aligned_verses(*modules: ZTextModule) -> Iterator[tuple[str, ...]]:
    """`(reference, text of module 1, text of module 2, ...)` for every verse non-empty in all modules.

    Modules of one versification are zipped as streams, in canonical order; otherwise the
    verses of all modules but the first are held in dicts keyed by reference.
    """
    if len(modules) < 2:
        raise ValueError("aligned_verses needs at least two modules")
    if len({module.versification for module in modules}) == 1:
        streams = [module.verses(include_empty=True) for module in modules]
        for verses in zip(*streams):
            if all(verse.text for verse in verses):
                yield (verses[0].reference, *(verse.text for verse in verses))
        return
    others = [{verse.reference: verse.text for verse in module.verses()} for module in modules[1:]]
    for verse in modules[0].verses():
        texts = [other.get(verse.reference) for other in others]
        if all(texts):
            yield (verse.reference, verse.text, *texts)


def write_parallel(
    pairs: Iterable[Sequence[str]],
    *paths: str | os.PathLike,
    references: str | os.PathLike | None = None,
) -> int:
    """Write aligned `(reference, text, text, ...)` rows as one file per language, a line each.

    With `references`, the references go to that file, line by line. Returns the number of rows.
    """
    handles = [open(path, "w", encoding="utf-8") for path in paths]
    reference_file = open(references, "w", encoding="utf-8") if references else None
    count = 0
    try:
        for reference, *texts in pairs:
            if len(texts) != len(handles):
                raise ValueError(f"{reference}: {len(texts)} texts for {len(handles)} files")
            for handle, text in zip(handles, texts):
                handle.write(_one_line(text) + "\n")
            if reference_file:
                reference_file.write(reference + "\n")
            count += 1
    finally:
        for handle in handles + ([reference_file] if reference_file else []):
            handle.close()
    return count


def _one_line(text: str) -> str:
    return _SPACE.sub(" ", text.replace("\t", " ")).strip()
