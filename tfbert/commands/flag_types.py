"""The argparse types of every numeric (and name) flag: a bad value is refused while the command line is parsed,
in one line naming the flag, before anything is loaded or written.

Each type is an object with the bounds it accepts (`low`, `high`), so a test can walk every subcommand and try
values outside them. argparse prints `tfbert CMD: error: argument --steps: 0 is not ... ; give 1 or more`.

    >>> parser = argparse.ArgumentParser(prog="tfbert pretrain")
    >>> _ = parser.add_argument("--steps", type=positive_int)
    >>> parser.parse_args(["--steps", "1000"]).steps
    1000
"""

from __future__ import annotations

import argparse
import math
import re

from tfbert.artifacts.files import MAX_SEQUENCE_LENGTH, MAX_VOCABULARY_SIZE
from tfbert.commands.errors import CommandError

INT32_MAX = 2**31 - 1
# A NumPy / Python seed is an unsigned 32-bit number.
SEED_MAX = 2**32 - 1
# [CLS] a [SEP] b [SEP], or RoBERTa's <s> a </s></s> b </s>, need at least 4 special tokens and a piece per text;
# 8 leaves a few pieces of text. The model's own limit (its position table) is checked when the config is read.
MIN_SEQUENCE_LENGTH = 8
# TF-Text's FastWordpieceTokenizer encodes a token's id in 22 bits: a vocabulary of more than 2**22 entries fails
# there, after minutes and gigabytes of building it. No published vocabulary is near it (XLM-R: 250,002).
MAX_VOCAB_SIZE = MAX_VOCABULARY_SIZE
# Adam-family learning rates of published BERT recipes are 1e-5..1e-3; above 1 every update is larger than the
# weights themselves, which is a typo (a missing "e-").
MAX_LEARNING_RATE = 1.0


class _BoundedNumber:
    """What `WholeNumber` and `FiniteNumber` share: parse the text as `kind`, check it, and refuse in one line that
    ends with what to give (`hint`, with the flag's `meaning`)."""

    kind = "number"

    def __init__(self, low, high, meaning: str = ""):
        self.low, self.high, self.meaning = low, high, meaning
        self.__name__ = f"{self.kind} {low}..{high}"

    def __call__(self, text: str):
        try:
            value = self.parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {self.kind}; {self.hint()}") from None
        refusal = self.refusal(text, value)
        if refusal:
            raise argparse.ArgumentTypeError(f"{refusal}; {self.hint()}")
        return value

    def hint(self) -> str:
        meaning = f" ({self.meaning})" if self.meaning else ""
        return f"give {self.accepted()}{meaning}"


class WholeNumber(_BoundedNumber):
    """An int flag within `low..high`; refuses floats, NaN and the like with what to give instead.

    Example:
        >>> WholeNumber(1)("3"), WholeNumber(0).low
        (3, 0)
    """

    kind = "whole number"

    def __init__(self, low: int, high: int = INT32_MAX, meaning: str = ""):
        super().__init__(low, high, meaning)

    @staticmethod
    def parse(text: str) -> int:
        return int(text)

    def refusal(self, text: str, value: int) -> str | None:
        return None if self.low <= value <= self.high else f"{value} is out of range"

    def accepted(self) -> str:
        return f"{self.low} or more" if self.high >= INT32_MAX else f"a whole number from {self.low} to {self.high}"


class FiniteNumber(_BoundedNumber):
    """A float flag within `low..high` (`low` itself excluded when `low_open`); refuses NaN and infinity.

    Example:
        >>> FiniteNumber(0, 1, low_open=True)("2e-5")
        2e-05
    """

    def __init__(self, low: float, high: float, low_open: bool = False, meaning: str = ""):
        super().__init__(low, high, meaning)
        self.low_open = low_open

    @staticmethod
    def parse(text: str) -> float:
        return float(text)

    def refusal(self, text: str, value: float) -> str | None:
        if not math.isfinite(value):
            return f"{text} is not a finite number"
        if value > self.high or value < self.low or (self.low_open and value == self.low):
            return f"{text} is out of range"
        return None

    def accepted(self) -> str:
        low = f"above {self.low:g}" if self.low_open else f"from {self.low:g}"
        return f"a number {low} up to {self.high:g}"


positive_int = WholeNumber(1)
non_negative_int = WholeNumber(0)
seed = WholeNumber(0, SEED_MAX)
version = WholeNumber(1, INT32_MAX, "TF Serving versions start at 1")
sequence_length = WholeNumber(MIN_SEQUENCE_LENGTH, MAX_SEQUENCE_LENGTH,
                              "pieces per sequence, special tokens included")
vocab_size = WholeNumber(1, MAX_VOCAB_SIZE, "the most TF-Text's tokenizers hold")
class_count = WholeNumber(2, 1_000_000, "a classifier needs at least 2 classes")
learning_rate = FiniteNumber(0.0, MAX_LEARNING_RATE, low_open=True, meaning="e.g. 2e-5")
score = FiniteNumber(-1e9, 1e9)
# The contrastive loss's margin is a cosine distance, which lies in 0..2.
margin = FiniteNumber(0.0, 2.0)
# Multiple-negatives' cosine scale (sentence-transformers: 20); e^(1000 * 2) already overflows float32.
similarity_scale = FiniteNumber(0.0, 100.0, low_open=True)

_UNSAFE_NAME = re.compile(r"[/\\\x00-\x1f\x7f]")


def path_component(text: str) -> str:
    """A name that is one folder name: not empty, not `.` or `..`, no slash, backslash or control character.

    Example:
        >>> path_component("sst2")
        'sst2'
    """
    if not text.strip() or text in (".", "..") or _UNSAFE_NAME.search(text) or text != text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not a plain folder name; give a name such as sst2 "
                                         "(letters, digits, - _ .; no slash, no leading or trailing space)")
    return text


NUMERIC_TYPES = (WholeNumber, FiniteNumber)


def check_flag_combinations(args: argparse.Namespace) -> None:
    """Flags that are fine alone but not together (`--warmup-steps` above `--steps`, ...), right after parsing.

    Raises `CommandError` naming both flags; `tfbert.cli.main` calls it before the command runs.
    """
    for problem in _combination_problems(vars(args)):
        raise CommandError(problem)


def _combination_problems(flags: dict):
    steps, warmup = flags.get("steps"), flags.get("warmup_steps")
    if steps is not None and warmup is not None and warmup > steps:
        yield f"--warmup-steps {warmup} is more than --steps {steps}; give at most {steps} warm-up steps"
    length, predictions = flags.get("sequence_length"), flags.get("max_predictions")
    if length is not None and predictions is not None and predictions > length - 3:
        yield (f"--max-predictions {predictions} leaves no room in --sequence-length {length} (3 special tokens); "
               f"give at most {length - 3}")
    per_call = flags.get("steps_per_execution")
    for flag in ("steps", "checkpoint_every"):
        if per_call and flags.get(flag) is not None and flags[flag] % per_call:
            yield (f"--{flag.replace('_', '-')} {flags[flag]} is not a multiple of --steps-per-execution {per_call} "
                   "(Keras runs whole executions); make it one")
    low_high = flags.get("score_range")
    if low_high and low_high[0] >= low_high[1]:
        yield f"--score-range {low_high[0]:g} {low_high[1]:g}: give LOW below HIGH"
