"""Decodes a data file's lines as UTF-8: strictly (one error naming the file and the line) or, as an
explicit opt-in, replacing undecodable bytes with U+FFFD and counting the lines it changed.

Written by hand because Python's codecs report a byte offset in the whole stream, not the line, and
do not count what `errors="replace"` changed; this decodes line by line (constant memory).

    >>> decoder = LineDecoder("replace")
    >>> lines = list(decoder.lines("latin1.txt"))
    >>> decoder.summary()
    'latin1.txt: 1 line with bytes that are not UTF-8, replaced by U+FFFD (--encoding-errors replace)'
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator

ENCODING_ERRORS = ("strict", "replace")
# Editors on Windows start UTF-8 files with it; it is not part of the first line's text (a header's first column).
UTF8_BOM = b"\xef\xbb\xbf"


class LineDecoder:
    """UTF-8 lines of files: `errors="strict"` raises ValueError at the first bad line, `"replace"` counts them.

    Example:
        >>> decoder = LineDecoder()
        >>> decoder.decode("a.txt", 3, b"caf\\xe9")
        Traceback (most recent call last):
        ValueError: a.txt line 3: not valid UTF-8 (byte 4); ...
    """

    def __init__(self, errors: str = "strict"):
        if errors not in ENCODING_ERRORS:
            raise ValueError(f"encoding errors {errors!r}: choose {' or '.join(ENCODING_ERRORS)}")
        self.errors = errors
        self.changed_lines: dict[str, int] = {}

    def decode(self, path: str | os.PathLike, number: int, line: bytes) -> str:
        """`line` (line `number` of `path`, 1-based) as text."""
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as error:
            if self.errors == "strict":
                raise ValueError(f"{path} line {number}: not valid UTF-8 (byte {error.start + 1}); convert the file "
                                 "to UTF-8 (e.g. iconv -f latin1 -t utf-8) or pass --encoding-errors replace") from None
        self.changed_lines[str(path)] = self.changed_lines.get(str(path), 0) + 1
        return line.decode("utf-8", "replace")

    def lines(self, path: str | os.PathLike, raw_lines: Iterable[bytes] | None = None) -> Iterator[str]:
        """The decoded lines of `path` (or of `raw_lines`, the file already open in binary mode)."""
        if raw_lines is None:
            with open(path, "rb") as raw:
                yield from self.lines(path, raw)
            return
        for number, line in enumerate(raw_lines, start=1):
            yield self.decode(path, number, line.removeprefix(UTF8_BOM) if number == 1 else line)

    def summary(self) -> str | None:
        """What replacing changed, one line (None when nothing was replaced)."""
        if not self.changed_lines:
            return None
        counts = ", ".join(f"{path}: {count} line{'s' if count > 1 else ''}" for path, count in self.changed_lines.items())
        return f"{counts} with bytes that are not UTF-8, replaced by U+FFFD (--encoding-errors replace)"
