"""Sentence pairs for STS and NLI: KorSTS, KorNLI, KLUE-STS, KLUE-NLI, GLUE STS-B, plain TSV and JSON Lines.

| format | file | columns / fields | label |
|---|---|---|---|
| `korsts` | `.tsv` with header | genre, filename, year, id, score, sentence1, sentence2 | score 0-5 |
| `stsb` | `.tsv` with header | index, genre, filename, year, old_index, source1, source2, sentence1, sentence2, score | score 0-5 |
| `kornli` | `.tsv` with header | sentence1, sentence2, gold_label | entailment / neutral / contradiction |
| `klue-sts` | `.json` list | sentence1, sentence2, labels.label | score 0-5 |
| `klue-nli` | `.json` list | premise, hypothesis, gold_label | entailment / neutral / contradiction |
| `pairs` | `.tsv`/`.txt`, no header | `s1<TAB>s2<TAB>score`, `s1<TAB>s2`, or `anchor<TAB>positive<TAB>negative` | score, none |
| `jsonl` | `.jsonl` | sentence1 (or premise, anchor), sentence2 (or hypothesis, positive), optional negative, score / label / gold_label | any |

The format follows the extension and the header (or first record); `format=` forces one. NLI rows
whose gold label is `-` (no annotator consensus, as in SNLI/MNLI) are skipped; any other bad row
raises `PairFileError` naming the file, the line and what was wrong.

Example:
    >>> from pathlib import Path
    >>> rows = ["genre\\tfilename\\tyear\\tid\\tscore\\tsentence1\\tsentence2",
    ...         "main-news\\tnews\\t2012\\t1\\t4.5\\t한 남자가 기타를 친다.\\t남자가 기타를 연주한다.",
    ...         "main-news\\tnews\\t2012\\t2\\t0.2\\t고양이가 잔다.\\t차가 달린다."]
    >>> _ = Path("sts-dev.tsv").write_text("\\n".join(rows) + "\\n", encoding="utf-8")
    >>> pairs = read_sentence_pairs("sts-dev.tsv")
    >>> pairs.format, pairs.kind, pairs.score_range, len(pairs)
    ('korsts', 'score', (0.0, 5.0), 2)
    >>> detect_pair_format("sts-dev.tsv")
    'korsts'
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from tfbert.data.local_files import FLOAT32_MAX, DataFileError, json_line_records

NLI_LABELS = ("entailment", "neutral", "contradiction")
NO_CONSENSUS = "-"
NO_LABEL = -1
STS_RANGE = (0.0, 5.0)
# Score ranges tried, in order, when a file does not say its own (plain TSV, JSON Lines).
COMMON_SCORE_RANGES = ((0.0, 1.0), (-1.0, 1.0), (0.0, 5.0), (0.0, 10.0), (0.0, 100.0))
KORSTS_COLUMNS = ("genre", "filename", "year", "id", "score", "sentence1", "sentence2")
STSB_COLUMNS = ("index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1", "sentence2",
                "score")
KORNLI_COLUMNS = ("sentence1", "sentence2", "gold_label")
PAIR_FORMATS = ("korsts", "stsb", "kornli", "klue-sts", "klue-nli", "pairs", "jsonl")
PAIR_KINDS = ("score", "nli", "unlabelled", "triplet")
JSON_FIRST = ("sentence1", "premise", "anchor")
JSON_SECOND = ("sentence2", "hypothesis", "positive")


class PairFileError(DataFileError):
    """A malformed row of a sentence-pair file, with the file and line."""


@dataclasses.dataclass
class SentencePairs:
    """Sentence pairs (or triplets) and their labels, read from one or more files.

    `kind` says what `labels` hold: `"score"` (float similarity, in the file's scale; see
    `score_range`), `"nli"` (int index into `NLI_LABELS`), `"unlabelled"` (pairs only) or
    `"triplet"` (`third` holds hard negatives; no labels).

    Example:
        >>> pairs = read_sentence_pairs("KorNLI/snli_1.0_train.ko.tsv")
        >>> pairs.kind, NLI_LABELS[pairs.labels[0]]
        ('nli', 'entailment')
    """

    first: list[str]
    second: list[str]
    labels: np.ndarray | None
    kind: str
    format: str
    third: list[str] | None = None
    score_range: tuple[float, float] | None = None

    def __len__(self) -> int:
        return len(self.first)

    def sentences(self) -> list[str]:
        """Every distinct sentence, in order of first appearance."""
        return list(dict.fromkeys([*self.first, *self.second, *(self.third or [])]))


def _text(path: Path, line: int, name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise PairFileError(path, f"expected a non-empty sentence, got {value!r}", line, name)
    return value


def _score(path: Path, line: int, name: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise PairFileError(path, f"expected a number, got {value!r}", line, name) from None
    if not math.isfinite(number) or abs(number) > FLOAT32_MAX:
        raise PairFileError(path, f"expected a finite number, got {value!r}", line, name)
    return number


def _nli_label(path: Path, line: int, name: str, value: Any) -> int:
    """Index of an NLI label name; `NO_LABEL` for the no-consensus `-`."""
    if value == NO_CONSENSUS:
        return NO_LABEL
    if value not in NLI_LABELS:
        raise PairFileError(path, f"expected one of {', '.join(NLI_LABELS)} (or '-'), got {value!r}", line, name)
    return NLI_LABELS.index(value)


# Each row reader yields (line, first, second, third or None, label or None).
Row = tuple[int, str, str, "str | None", "float | int | None"]


def _tsv_rows(path: Path, skip_header: bool) -> Iterator[tuple[int, list[str]]]:
    # QUOTE_NONE: KorSTS, KorNLI and STS-B hold unbalanced quotes inside sentences.
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        if skip_header:
            next(reader, None)
        for row in reader:
            if row and row != [""]:
                yield reader.line_num, row


def _columns_rows(path: Path, columns: Sequence[str], label: str, parse) -> Iterator[Row]:
    index = {name: position for position, name in enumerate(columns)}
    for line, row in _tsv_rows(path, skip_header=True):
        if len(row) != len(columns):
            raise PairFileError(path, f"expected {len(columns)} tab-separated fields ({', '.join(columns)}), "
                                      f"got {len(row)}", line)
        first = _text(path, line, "sentence1", row[index["sentence1"]])
        second = _text(path, line, "sentence2", row[index["sentence2"]])
        yield line, first, second, None, parse(path, line, label, row[index[label]])


def _plain_rows(path: Path) -> Iterator[Row]:
    shape = None
    for line, row in _tsv_rows(path, skip_header=False):
        if len(row) not in (2, 3):
            raise PairFileError(path, f"expected 2 or 3 tab-separated fields (s1, s2[, score] or anchor, positive, "
                                      f"negative), got {len(row)}", line)
        row_shape = "pair" if len(row) == 2 else "score" if _is_number(row[2]) else "triplet"
        if shape is None:
            shape = row_shape
        elif row_shape != shape:
            raise PairFileError(path, f"this row is a {row_shape} row but the file started with {shape} rows; "
                                      "give every row the same fields", line)
        first, second = _text(path, line, "field 1", row[0]), _text(path, line, "field 2", row[1])
        if shape == "triplet":
            yield line, first, second, _text(path, line, "field 3", row[2]), None
        else:
            yield line, first, second, None, _score(path, line, "field 3", row[2]) if shape == "score" else None


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _json_array(path: Path) -> Iterator[tuple[int, Any]]:
    """`(line, item)` of each element of a JSON array file, the line where the element starts."""
    text = path.read_text(encoding="utf-8-sig")
    decoder = json.JSONDecoder()
    position, line = _skip_space(text, 0), 1
    if text[position:position + 1] != "[":
        raise PairFileError(path, "expected a JSON array of objects (KLUE-STS / KLUE-NLI format)",
                            text.count("\n", 0, position) + 1)
    position, counted = _skip_space(text, position + 1), 0
    while text[position:position + 1] != "]":
        line += text.count("\n", counted, position)
        counted = position
        try:
            item, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise PairFileError(path, f"not valid JSON ({error.msg})", error.lineno) from None
        yield line, item
        position = _skip_space(text, position)
        if text[position:position + 1] == ",":
            position = _skip_space(text, position + 1)
        elif text[position:position + 1] != "]":
            raise PairFileError(path, "expected ',' or ']' after an element", text.count("\n", 0, position) + 1)


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _field(path: Path, line: int, record: Any, dotted: str) -> Any:
    value = record
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            found = ", ".join(sorted(value)) if isinstance(value, dict) else type(value).__name__
            raise PairFileError(path, f"missing field {dotted!r} (found: {found})", line)
        value = value[key]
    return value


def _klue_rows(path: Path, nli: bool) -> Iterator[Row]:
    names = ("premise", "hypothesis", "gold_label") if nli else ("sentence1", "sentence2", "labels.label")
    for line, record in _json_array(path):
        first = _text(path, line, names[0], _field(path, line, record, names[0]))
        second = _text(path, line, names[1], _field(path, line, record, names[1]))
        value = _field(path, line, record, names[2])
        label = _nli_label(path, line, names[2], value) if nli else _score(path, line, names[2], value)
        yield line, first, second, None, label


def _json_lines_rows(path: Path) -> Iterator[Row]:
    with path.open(encoding="utf-8-sig") as handle:
        for line, record in json_line_records(path, handle):
            yield _json_record_row(path, line, record)


def _json_record_row(path: Path, line: int, record: dict) -> Row:
    first_name = next((name for name in JSON_FIRST if name in record), None)
    second_name = next((name for name in JSON_SECOND if name in record), None)
    if first_name is None or second_name is None:
        raise PairFileError(path, f"expected fields {' / '.join(JSON_FIRST)} and {' / '.join(JSON_SECOND)} "
                                  f"(found: {', '.join(sorted(record)) or 'none'})", line)
    first, second = _text(path, line, first_name, record[first_name]), _text(path, line, second_name, record[second_name])
    if "negative" in record:
        return line, first, second, _text(path, line, "negative", record["negative"]), None
    for name in ("score", "label", "gold_label"):
        if name in record:
            value = record[name]
            if isinstance(value, str) and not _is_number(value):
                return line, first, second, None, _nli_label(path, line, name, value)
            return line, first, second, None, _score(path, line, name, value)
    return line, first, second, None, None


def detect_pair_format(path: str | Path) -> str:
    """The format of a sentence-pair file, from its extension and its header or first record.

    Example:
        >>> detect_pair_format("KorSTS/sts-dev.tsv"), detect_pair_format("klue-nli-v1.1_dev.json")
        ('korsts', 'klue-nli')
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix == ".json":
        for line, record in _json_array(path):
            return "klue-nli" if isinstance(record, dict) and "premise" in record else "klue-sts"
        raise PairFileError(path, "the JSON array is empty; expected KLUE-STS or KLUE-NLI objects")
    with path.open(encoding="utf-8-sig", newline="") as handle:
        header = tuple(handle.readline().rstrip("\r\n").split("\t"))
    known = {KORSTS_COLUMNS: "korsts", STSB_COLUMNS: "stsb", KORNLI_COLUMNS: "kornli"}
    return known.get(header, "pairs")


def _rows(path: Path, format: str) -> Iterator[Row]:
    if format == "korsts":
        return _columns_rows(path, KORSTS_COLUMNS, "score", _score)
    if format == "stsb":
        return _columns_rows(path, STSB_COLUMNS, "score", _score)
    if format == "kornli":
        return _columns_rows(path, KORNLI_COLUMNS, "gold_label", _nli_label)
    if format in ("klue-sts", "klue-nli"):
        return _klue_rows(path, nli=format == "klue-nli")
    if format == "jsonl":
        return _json_lines_rows(path)
    return _plain_rows(path)


def _row_kind(third, label) -> str:
    if third is not None:
        return "triplet"
    if label is None:
        return "unlabelled"
    return "nli" if isinstance(label, int) else "score"


def read_sentence_pairs(path: str | Path, format: str | None = None) -> SentencePairs:
    """The pairs of one file (see the module notes for the formats); `format` forces one of `PAIR_FORMATS`.

    Example:
        >>> read_sentence_pairs("klue-sts-v1.1_dev.json").score_range
        (0.0, 5.0)
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such data file")
    if format is not None and format not in PAIR_FORMATS:
        raise ValueError(f"unknown pair format {format!r}; expected one of {', '.join(PAIR_FORMATS)}")
    format = format or detect_pair_format(path)
    first, second, third, labels, kind = [], [], [], [], None
    for line, a, b, c, label in _rows(path, format):
        row_kind = _row_kind(c, label)
        if kind is None:
            kind = row_kind
        elif row_kind != kind:
            raise PairFileError(path, f"a {row_kind} row in a file of {kind} rows", line)
        if kind == "nli" and label == NO_LABEL:
            continue  # "-": no gold label
        first.append(a)
        second.append(b)
        third.append(c)
        labels.append(label)
    if kind is None:
        raise PairFileError(path, f"no sentence pairs in the file (read as {format})")
    return SentencePairs(
        first, second,
        None if kind in ("unlabelled", "triplet") else np.asarray(labels, np.float32 if kind == "score" else np.int32),
        kind, format, third if kind == "triplet" else None,
        STS_RANGE if format in ("korsts", "stsb", "klue-sts") else None)


def combine_pairs(parts: Sequence[SentencePairs]) -> SentencePairs:
    """One set of pairs from several files of the same kind (e.g. gold + silver STS pairs).

    Example:
        >>> train = combine_pairs([read_sentence_pairs("KorSTS/sts-train.tsv"), read_sentence_pairs("silver.tsv")])
        >>> len(train)
        12
    """
    kinds = {part.kind for part in parts}
    if len(kinds) != 1:
        raise ValueError(f"the files hold different kinds of pairs ({', '.join(sorted(kinds))}); "
                         "train on files of one kind")
    first = parts[0]
    ranges = {part.score_range for part in parts if part.score_range is not None}
    return SentencePairs(
        [text for part in parts for text in part.first], [text for part in parts for text in part.second],
        None if first.labels is None else np.concatenate([part.labels for part in parts]),
        first.kind, "+".join(dict.fromkeys(part.format for part in parts)),
        None if first.third is None else [text for part in parts for text in part.third],
        ranges.pop() if len(ranges) == 1 else None)


def score_range(pairs: SentencePairs) -> tuple[float, float]:
    """The scale of `pairs`' scores: the one its format defines, else the first of `COMMON_SCORE_RANGES`
    that holds every score, else the lowest and highest score.

    Example:
        >>> score_range(read_sentence_pairs("silver.tsv"))      # scores 0.3 .. 4.8
        (0.0, 5.0)
    """
    if pairs.kind != "score":
        raise ValueError(f"{pairs.format} pairs hold {pairs.kind} labels, not similarity scores")
    if pairs.score_range is not None:
        return pairs.score_range
    low, high = float(np.min(pairs.labels)), float(np.max(pairs.labels))
    found = next(((a, b) for a, b in COMMON_SCORE_RANGES if a <= low and high <= b), None)
    return found or (low, high)


def normalise_scores(scores: np.ndarray, scale: tuple[float, float]) -> np.ndarray:
    """Scores mapped from `scale` to 0..1 (STS 0-5 -> 0-1, as sentence-transformers' STS recipes do).

    Example:
        >>> normalise_scores(np.array([0.0, 2.5, 5.0]), (0.0, 5.0))
        array([0. , 0.5, 1. ], dtype=float32)
    """
    low, high = scale
    if not high > low:
        raise ValueError(f"score range {low}..{high} is empty; give a range whose end is above its start")
    return ((np.asarray(scores, np.float32) - low) / (high - low)).astype(np.float32)
