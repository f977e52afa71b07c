"""Local CSV, TSV and JSON Lines files with the columns of the TFDS datasets.

Every error names the file, the line (1-based, the header is line 1 of a
CSV/TSV file) and the column at fault.

Example:
    >>> from tfbert.data.text_examples import read_text_examples
    >>> examples = read_text_examples("train.tsv", text_columns=("sentence",), label_column="label")
    >>> examples.texts[0], examples.labels[0]
    ('a gripping film', np.int32(1))
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Iterator, Sequence

from tfbert.data.text_decoding import LineDecoder

FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "jsonl"}
# Scores are float32 in training: a larger number in a file would become infinite.
FLOAT32_MAX = 3.4028234663852886e38


class DataFileError(ValueError):
    """A problem in a data file, with the place where it is."""

    def __init__(self, path: str | Path, message: str, line: int | None = None, column: str | None = None):
        where = str(path) + (f", line {line}" if line is not None else "") + (
            f", column {column!r}" if column is not None else "")
        super().__init__(f"{where}: {message}")
        self.path, self.line, self.column = str(path), line, column


def file_format(path: str | Path, format: str | None = None) -> str:
    """`"csv"`, `"tsv"` or `"jsonl"`: `format` if given, else from the file extension."""
    if format is not None:
        if format not in FORMATS.values():
            raise ValueError(f"unknown format {format!r}; expected csv, tsv or jsonl")
        return format
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise DataFileError(path, f"cannot tell the format from the extension {suffix!r}; "
                                  "name the file .csv, .tsv or .jsonl")
    return FORMATS[suffix]


def read_records(path: str | Path, required: Sequence[str], format: str | None = None,
                 decoder: LineDecoder | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """`(line number, record)` for every record, each checked to have the `required` columns.

    Lines are decoded by `decoder` (default strict: bytes that are not UTF-8 are an error naming the line).
    """
    path = Path(path)
    if path.is_dir():
        raise DataFileError(path, "is a folder; give a CSV, TSV or JSON Lines file")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such data file")
    kind = file_format(path, format)
    with path.open("rb") as raw:
        handle = (decoder or LineDecoder()).lines(path, raw)
        if kind == "jsonl":
            yield from json_line_records(path, handle, required)
        else:
            yield from _delimited(path, handle, required, "," if kind == "csv" else "\t")


def json_line_records(path: Path, handle, required: Sequence[str] = ()) -> Iterator[tuple[int, dict[str, Any]]]:
    """`(line number, object)` of each non-blank line of an open JSON Lines file, each checked to have `required`."""
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataFileError(path, f"not valid JSON ({error.msg} at character {error.colno})", number) from None
        if not isinstance(record, dict):
            raise DataFileError(path, f"expected a JSON object, got {type(record).__name__}", number)
        for column in required:
            if column not in record:
                raise DataFileError(path, f"missing column (record has {', '.join(sorted(record)) or 'none'})",
                                    number, column)
        yield number, record


def _delimited(path: Path, handle, required: Sequence[str], delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
    # QUOTE_NONE for TSV: GLUE's TSV files contain unbalanced quotes inside sentences.
    reader = csv.reader(handle, delimiter=delimiter, quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL)
    header = next(reader, None)
    if not header or header == [""]:
        raise DataFileError(path, "the file is empty; expected a header line", 1)
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise DataFileError(path, f"the header names {', '.join(map(repr, repeated))} more than once; give every "
                                  "column its own name", 1)
    for column in required:
        if column not in header:
            raise DataFileError(path, f"missing column in the header (columns: {', '.join(header)})", 1, column)
    for row in reader:
        number = reader.line_num
        if not row or row == [""]:
            continue
        if len(row) != len(header):
            raise DataFileError(path, f"expected {len(header)} fields like the header, got {len(row)}", number)
        yield number, dict(zip(header, row))
