"""SQuAD 1.1 / 2.0 questions as `QAExample`s: from TensorFlow Datasets, the official JSON, or JSON Lines.

Example:
    >>> dev = load_squad("v2.0", "validation")             # TFDS squad/v2.0  # doctest: +SKIP
    >>> local = read_squad_jsonl("dev.jsonl")              # {"id", "question", "context", "answers": {...}}
    >>> local[0].question
    'Who wrote Botchan?'
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Mapping

from tfbert.data.local_files import DataFileError, read_records

SQUAD_VERSIONS = ("v1.1", "v2.0")
JSONL_COLUMNS = ("id", "question", "context", "answers")


@dataclasses.dataclass(frozen=True)
class QAExample:
    """One question on one context; `answer_starts` are character offsets into `context`.

    Example:
        >>> example = QAExample("q1", "Who wrote it?", "It was written by Ada.", ["Ada"], [18])
        >>> example.context[example.answer_starts[0]:][:3]
        'Ada'
    """

    id: str
    question: str
    context: str
    answers: list[str] = dataclasses.field(default_factory=list)
    answer_starts: list[int] = dataclasses.field(default_factory=list)
    is_impossible: bool = False


def _text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def load_squad(version: str, split: str, data_dir: str | None = None, download: bool = True) -> list[QAExample]:
    """One split (`"train"`, `"validation"`) of TFDS `squad/v1.1` or `squad/v2.0`."""
    import tensorflow_datasets as tfds

    if version not in SQUAD_VERSIONS:
        raise ValueError(f"unknown SQuAD version {version!r}; expected one of {', '.join(SQUAD_VERSIONS)}")
    dataset = tfds.load(f"squad/{version}", split=split, data_dir=data_dir, download=download)
    return [
        QAExample(
            id=_text(record["id"]),
            question=_text(record["question"]),
            context=_text(record["context"]),
            answers=[_text(text) for text in record["answers"]["text"]],
            answer_starts=[int(start) for start in record["answers"]["answer_start"]],
            is_impossible=bool(record.get("is_impossible", False)),
        )
        for record in tfds.as_numpy(dataset)
    ]


def _checked_example(record: Mapping[str, Any], path: Path, line: int | None) -> QAExample:
    answers = record["answers"]
    if isinstance(answers, list):  # the official JSON: [{"text": ..., "answer_start": ...}]
        answers = {"text": [a.get("text") for a in answers], "answer_start": [a.get("answer_start") for a in answers]}
    if not isinstance(answers, Mapping) or "text" not in answers or "answer_start" not in answers:
        raise DataFileError(path, "expected {'text': [...], 'answer_start': [...]}", line, "answers")
    texts, starts = list(answers["text"]), list(answers["answer_start"])
    if len(texts) != len(starts) or not all(isinstance(t, str) for t in texts) or not all(
            isinstance(s, int) for s in starts):
        raise DataFileError(path, "needs as many answer texts (strings) as answer_start offsets (integers)",
                            line, "answers")
    context = record["context"]
    for text, start in zip(texts, starts):
        if context[start:start + len(text)] != text:
            raise DataFileError(path, f"answer {text!r} is not at character {start} of the context of question "
                                      f"{record['id']!r}", line, "answers")
    return QAExample(str(record["id"]), record["question"], context, texts, starts,
                     bool(record.get("is_impossible", not texts)))


def read_squad_jsonl(path: str | Path) -> list[QAExample]:
    """Questions from JSON Lines with the TFDS schema: `id`, `question`, `context`,
    `answers: {"text": [...], "answer_start": [...]}` and optionally `is_impossible`."""
    return [_checked_example(record, Path(path), line) for line, record in read_records(path, JSONL_COLUMNS, "jsonl")]


def read_squad_json(path: str | Path) -> list[QAExample]:
    """Questions from an official SQuAD file (`{"data": [{"paragraphs": [{"context", "qas"}]}]}`)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such data file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise DataFileError(path, f"not valid JSON ({error.msg})", error.lineno) from None
    examples = []
    for article in data.get("data", []):
        for paragraph in article.get("paragraphs", []):
            for qa in paragraph.get("qas", []):
                for column in ("id", "question", "answers"):
                    if column not in qa:
                        raise DataFileError(path, f"a question of {article.get('title', 'an article')!r} has no "
                                                  f"{column!r}", column=column)
                examples.append(_checked_example({**qa, "context": paragraph["context"]}, path, None))
    return examples
