"""Class labels of local fine-tuning files, checked before training: no negative ids, no strays.

A label outside the declared classes (`num_classes`) is an error naming its file and line. With no
declaration the classes are inferred from the training files and must be 0..K-1 without gaps, so a
typo such as a `7` in a 0/1 file is caught instead of silently making an 8-class model.

    >>> from tfbert.data.text_examples import read_text_examples
    >>> train = read_text_examples("train.tsv", text_columns=("sentence",), label_column="label")
    >>> classes = check_class_labels([("train.tsv", train)], [("train.tsv", train)])
    >>> classes.describe()
    '2 classes (inferred from the training labels): 0 ×2, 1 ×2'
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Sequence

from tfbert.data.local_files import DataFileError
from tfbert.data.text_examples import TextExamples

LabelledFile = tuple[str, TextExamples]


@dataclasses.dataclass(frozen=True)
class ClassLabels:
    """The classes a run trains: how many, how often each occurs in training, and whether they were declared.

    Example:
        >>> ClassLabels(2, {0: 3, 1: 5}, declared=True).describe()
        '2 classes (declared): 0 ×3, 1 ×5'
    """

    num_classes: int
    counts: dict[int, int]
    declared: bool

    def describe(self) -> str:
        source = "declared" if self.declared else "inferred from the training labels"
        counts = ", ".join(f"{label} ×{self.counts.get(label, 0)}" for label in range(self.num_classes))
        return f"{self.num_classes} classes ({source}): {counts}"


def _line(examples: TextExamples, index: int) -> int | None:
    return examples.lines[index] if examples.lines is not None else None


def _check_file(path: str, examples: TextExamples, num_classes: int | None, column: str) -> None:
    if len(examples) == 0:
        raise DataFileError(path, "holds no examples; give a file with a header line and at least one row")
    for index, label in enumerate(examples.labels.tolist()):
        if label < 0:
            raise DataFileError(path, f"label {label} is not a class id (0 or more); remove unlabelled rows",
                                _line(examples, index), column)
        if num_classes is not None and label >= num_classes:
            raise DataFileError(path, f"label {label} is not one of the {num_classes} classes (0..{num_classes - 1}); "
                                      "fix the row, or declare more classes with --num-classes",
                                _line(examples, index), column)


def _first_stray(train: Sequence[LabelledFile], classes: list[int], column: str) -> DataFileError | None:
    """The first training label beyond a gap in `classes` (sorted ids seen), as an error; None without gaps."""
    missing = sorted(set(range(classes[-1] + 1)) - set(classes))
    if not missing:
        return None
    for path, examples in train:
        for index, label in enumerate(examples.labels.tolist()):
            if label > missing[0]:
                seen = ", ".join(map(str, classes))
                return DataFileError(
                    path, f"label {label} leaves class {missing[0]} unused (labels seen: {seen}); fix the row, or "
                          f"declare the classes with --num-classes {classes[-1] + 1} (or --label-names)",
                    _line(examples, index), column)
    return None


def check_class_labels(train: Sequence[LabelledFile], evaluation: Sequence[LabelledFile],
                       num_classes: int | None = None, column: str = "label") -> ClassLabels:
    """Checks the integer labels of the training and evaluation files; returns the classes to train.

    Raises `DataFileError` (file, line, column) for an empty file, a negative label, a label outside the
    declared `num_classes`, or with none declared, a training label after a gap in the ids (a stray) and
    an evaluation label the training files never use.
    """
    for path, examples in [*train, *evaluation]:
        _check_file(path, examples, num_classes, column)
    counts = Counter(label for _, examples in train for label in examples.labels.tolist())
    if num_classes is not None:
        return ClassLabels(num_classes, dict(counts), declared=True)
    classes = sorted(counts)
    stray = _first_stray(train, classes, column)
    if stray is not None:
        raise stray
    inferred = classes[-1] + 1
    for path, examples in evaluation:
        _check_file(path, examples, inferred, column)
    return ClassLabels(inferred, dict(counts), declared=False)
