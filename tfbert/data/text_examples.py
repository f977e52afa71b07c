"""Labelled texts and text pairs (GLUE schema), from TensorFlow Datasets or local files.

Example:
    >>> train = load_glue("mrpc", "train")                 # TFDS glue/mrpc  # doctest: +SKIP
    >>> from tfbert.finetuning.features import encode_texts
    >>> from tfbert.text import load_tokenizer
    >>> dev = read_text_examples("train.tsv", GLUE_TASKS["sst2"].text_columns)
    >>> features = encode_texts(load_tokenizer("vocab/"), dev.texts, dev.pair_texts, max_length=16)
    >>> features["token_ids"].shape
    (4, 16)
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Sequence

import numpy as np

from tfbert.data.local_files import FLOAT32_MAX, DataFileError, read_records
from tfbert.data.text_decoding import LineDecoder


@dataclasses.dataclass(frozen=True)
class GlueTask:
    """Columns, label kind and official metric of one GLUE task (TFDS feature names)."""

    text_columns: tuple[str, ...]
    num_classes: int          # 0: regression
    metric: str
    validation_split: str = "validation"

    @property
    def is_regression(self) -> bool:
        return self.num_classes == 0


GLUE_TASKS = {
    "cola": GlueTask(("sentence",), 2, "matthews_correlation"),
    "sst2": GlueTask(("sentence",), 2, "accuracy"),
    "mrpc": GlueTask(("sentence1", "sentence2"), 2, "f1"),
    "qqp": GlueTask(("question1", "question2"), 2, "f1"),
    "stsb": GlueTask(("sentence1", "sentence2"), 0, "spearman_correlation"),
    "mnli": GlueTask(("premise", "hypothesis"), 3, "accuracy", "validation_matched"),
    "qnli": GlueTask(("question", "sentence"), 2, "accuracy"),
    "rte": GlueTask(("sentence1", "sentence2"), 2, "accuracy"),
    "wnli": GlueTask(("sentence1", "sentence2"), 2, "accuracy"),
}


@dataclasses.dataclass
class TextExamples:
    """Texts, optional pair texts and labels (int classes or float scores; -1 on unlabelled GLUE test sets).

    `lines`: each example's line in its file (read from a local file), for errors that name the line.
    """

    texts: list[str]
    pair_texts: list[str] | None
    labels: np.ndarray
    lines: list[int] | None = None

    def __len__(self) -> int:
        return len(self.texts)


def _decode(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def load_glue(task: str, split: str, data_dir: str | None = None, download: bool = True) -> TextExamples:
    """One split of a GLUE task from TensorFlow Datasets (`glue/<task>`), e.g. `load_glue("sst2", "train")`."""
    import tensorflow_datasets as tfds

    if task not in GLUE_TASKS:
        raise ValueError(f"unknown GLUE task {task!r}; expected one of {', '.join(GLUE_TASKS)}")
    spec = GLUE_TASKS[task]
    try:
        dataset = tfds.load(f"glue/{task}", split=split, data_dir=data_dir, download=download)
    except (OSError, ImportError) as error:  # no network (requests' errors are OSErrors), a missing module
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise OSError(f"cannot load glue/{task} from TensorFlow Datasets ({type(error).__name__}: {reason}); it "
                      f"downloads GLUE on first use, which needs the internet, then reads "
                      f"{data_dir or '~/tensorflow_datasets'}") from None
    texts: dict[str, list[str]] = {column: [] for column in spec.text_columns}
    labels = []
    for record in tfds.as_numpy(dataset):
        for column in spec.text_columns:
            texts[column].append(_decode(record[column]))
        labels.append(record["label"])
    first, *rest = spec.text_columns
    return TextExamples(texts[first], texts[rest[0]] if rest else None,
                        np.asarray(labels, np.float32 if spec.is_regression else np.int32))


# Class ids are int32 in the models and their inputs.
LARGEST_CLASS_ID = 2**31 - 1


def _parse_label(value, path: Path, line: int, column: str, regression: bool, label_names: Sequence[str] | None):
    if regression:
        return _parse_score(value, path, line, column)
    if label_names is not None and value in label_names:
        return list(label_names).index(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number != int(number):
        allowed = f"an integer class id or one of {', '.join(label_names)}" if label_names else "an integer class id"
        raise DataFileError(path, f"{value!r} is not {allowed}", line, column)
    if abs(number) > LARGEST_CLASS_ID:
        raise DataFileError(path, f"label {value} is beyond the class ids a model holds (0..{LARGEST_CLASS_ID}); "
                                  "give class ids 0..N-1", line, column)
    return int(number)


def _parse_score(value, path: Path, line: int, column: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DataFileError(path, f"{value!r} is not a number", line, column) from None
    if not math.isfinite(number) or abs(number) > FLOAT32_MAX:
        raise DataFileError(path, f"score {value!r} is not a finite number; give every example a real score",
                            line, column)
    return number


def read_text_examples(
    path: str | Path,
    text_columns: Sequence[str] = ("sentence",),
    label_column: str = "label",
    regression: bool = False,
    label_names: Sequence[str] | None = None,
    format: str | None = None,
    decoder: LineDecoder | None = None,
) -> TextExamples:
    """Texts (one or two columns) and labels from a CSV, TSV or JSON Lines file.

    Labels are class ids, class names from `label_names`, or numbers with
    `regression=True`. Raises `DataFileError` naming the file, line and column. `decoder`
    (default strict) decides what bytes that are not UTF-8 do (`LineDecoder`).
    """
    if not 1 <= len(text_columns) <= 2:
        raise ValueError(f"text_columns must name one or two columns, got {list(text_columns)}")
    path = Path(path)
    texts: list[list[str]] = [[] for _ in text_columns]
    labels, lines = [], []
    for line, record in read_records(path, [*text_columns, label_column], format, decoder):
        lines.append(line)
        for values, column in zip(texts, text_columns):
            if not isinstance(record[column], str):
                raise DataFileError(path, f"expected text, got {type(record[column]).__name__}", line, column)
            values.append(record[column])
        labels.append(_parse_label(record[label_column], path, line, label_column, regression, label_names))
    return TextExamples(texts[0], texts[1] if len(texts) > 1 else None,
                        np.asarray(labels, np.float32 if regression else np.int32), lines)
