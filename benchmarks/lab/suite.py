"""The tables `python -m benchmarks` runs, each at its full size or `quick` (tiny sizes, few steps: a smoke run).

Full sizes are the ones `benchmarks/RESULTS.md` records; quick ones finish in seconds and only show
that a table runs on this machine (their numbers are noise).

Example:
    >>> sorted(TABLES)
    ['pipeline', 'serve', 'tokenize', 'train']
    >>> tables = TABLES["tokenize"](quick=True)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Callable

from benchmarks.lab import peers, pipeline, serving, tokenization, training, training_jax
from benchmarks.lab.report import Table


def tokenize(quick: bool, only: str = "") -> list[Table]:
    """Tokenization MB/s and batch-1 latency: every 32nd corpus line, batch 256, one pass, 20 single strings,
    no same-work rows when quick; else all lines, batches 256/1024/4096, best of 3, 300 single strings.

    `only` keeps the tokenizer families whose name contains it (`WordPiece`, `SentencePiece`, `BPE`)."""
    lines = tokenization.corpus()
    if quick:
        return tokenization.measure(lines[::32], batch_sizes=[256], repeats=1, only=only, latency=20, same_work=False)
    return tokenization.measure(lines, batch_sizes=[256, 1024, 4096], repeats=3, only=only, latency=300)


def input_pipeline(quick: bool, only: str = "") -> list[Table]:
    """Masked-LM examples/s: batch 32 for half a second when quick; else batch 256, best of 3 rounds of 15 s."""
    if quick:
        return [pipeline.measure(batch_size=32, seconds=0.5, rounds=1)]
    return [pipeline.measure(batch_size=256, seconds=15.0, rounds=3)]


def train(quick: bool, only: str = "") -> list[Table]:
    """Masked-LM train steps/s with TensorFlow beside keras-hub and PyTorch, then tfbert on JAX where installed
    (float32, the same sizes, for the backend ratio): bert_tiny, batch 4, 2 steps when quick; else
    bert_small and albert_base, batch 16, median of 6 steps after 2."""
    configs, batch_size, steps, warmup = (["bert_tiny"], 4, 2, 1) if quick else (["bert_small", "albert_base"], 16, 6, 2)
    tables = [training.measure(configs, batch_size, steps, warmup)]
    if not peers.installed("jax"):
        tables[0].notes.append(peers.skipped_note("jax") + " (no JAX backend table)")
        return tables
    jax_table = training_jax.measure_in_subprocess(configs, batch_size, "float32", steps, warmup,
                                                   peak_size=512 if quick else 2048)
    for tensorflow_row, jax_row in zip(tables[0].rows, jax_table.rows):
        jax_table.notes.append(f"{jax_row[0]}: tfbert on JAX / tfbert on TensorFlow "
                               f"{float(jax_row[1]) / float(tensorflow_row[1]):.2f}x")
    return tables + [jax_table]


def serve(quick: bool, only: str = "") -> list[Table]:
    """MiniLM embeddings from the SavedModel beside tokenizers + PyTorch: 10 requests, 0.5 s of batch 8 when
    quick; else 200 requests and 15 s of batch 64."""
    if quick:
        return [serving.measure(requests=10, seconds=0.5, batch_size=8)]
    return [serving.measure(requests=200, seconds=15.0, batch_size=64)]


# name -> measure(quick, only) (`only` narrows the tokenize table)
TABLES: dict[str, Callable[[bool, str], list[Table]]] = {"tokenize": tokenize, "pipeline": input_pipeline,
                                                         "train": train, "serve": serve}
