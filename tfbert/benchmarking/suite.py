"""The tables `tfbert benchmark` runs, each at its full size or `quick` (tiny sizes, few steps: a smoke run).

Full sizes are the ones `benchmarks/RESULTS.md` records; quick ones finish in seconds and only show
that a table runs on this machine (their numbers are noise).

Example:
    >>> sorted(TABLES)
    ['pipeline', 'tokenize']
    >>> tables = TABLES["tokenize"](quick=True)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Callable

from tfbert.benchmarking import pipeline, tokenization
from tfbert.benchmarking.report import Table


def tokenize(quick: bool, only: str = "") -> list[Table]:
    """Tokenization MB/s: every 32nd corpus line, batch 256, one pass when quick; else all, 256/1024/4096, best of 3.

    `only` keeps the tokenizer families whose name contains it (`WordPiece`, `SentencePiece`, `BPE`)."""
    lines = tokenization.corpus()
    if quick:
        return [tokenization.measure(lines[::32], batch_sizes=[256], repeats=1, only=only)]
    return [tokenization.measure(lines, batch_sizes=[256, 1024, 4096], repeats=3, only=only)]


def input_pipeline(quick: bool, only: str = "") -> list[Table]:
    """Masked-LM examples/s: batch 32 for half a second when quick; else batch 256, best of 3 rounds of 15 s."""
    if quick:
        return [pipeline.measure(batch_size=32, seconds=0.5, rounds=1)]
    return [pipeline.measure(batch_size=256, seconds=15.0, rounds=3)]


# name -> measure(quick, only) (`only` narrows the tokenize table)
TABLES: dict[str, Callable[[bool, str], list[Table]]] = {"tokenize": tokenize, "pipeline": input_pipeline}
