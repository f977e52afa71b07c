"""Checks a text data file before any work starts: one clear error naming the file and the bad line.

Written by hand because no library reports *which line* of a corpus is binary or undecodable; the
check streams the file once (constant memory) and stops at the first problem.

    >>> check_text_file("corpus.txt")
    >>> check_text_file("latin1.txt")
    Traceback (most recent call last):
    ValueError: ...latin1.txt line 3: not valid UTF-8 ...
"""

from __future__ import annotations

import glob
import os

from tfbert.data.text_decoding import LineDecoder


def check_text_file(path: str, decoder: LineDecoder | None = None, allow_nul: bool = False) -> None:
    """Raises ValueError unless `path` is a non-empty, UTF-8, NUL-free text file with a non-blank line.

    `decoder` (default: strict) decides what undecodable UTF-8 does: an error, or a counted replacement.
    `allow_nul` lets NUL bytes through in lines that are valid UTF-8 (vocabulary training keeps the text
    after a NUL, as the reference trainers do); a binary file still fails the UTF-8 check.
    """
    decoder = decoder or LineDecoder()
    if os.path.isdir(path):
        raise ValueError(f"{path!r} is a folder; give a text file (one sentence a line)")
    has_text = False
    with open(path, "rb") as lines:
        for number, line in enumerate(lines, start=1):
            if b"\0" in line and not allow_nul:
                raise ValueError(f"{path} line {number}: contains a NUL byte; is it a binary file? "
                                 "give UTF-8 text (one sentence a line)")
            text = decoder.decode(path, number, line)
            has_text = has_text or bool(text.strip())
    if not has_text:
        raise ValueError(f"{path} is empty or has only blank lines; give a text file with one sentence a line")


def check_text_files(paths: list[str], decoder: LineDecoder | None = None) -> None:
    """`check_text_file` for each local plain-text file or glob match.

    Remote `scheme://` paths, `tfds:`/`corpus:`/XLM specs, `.gz` and TFRecord files are left to their readers.
    """
    for pattern in paths:
        if "://" in pattern or pattern.startswith(("tfds:", "corpus:", "tlm:", "mlm:", "clm:")):
            continue
        for path in sorted(glob.glob(pattern)) or [pattern]:
            if not path.endswith((".gz", ".tfrecord", ".tfrecords")):
                check_text_file(path, decoder)
