"""Shared pieces of the learning benchmarks (learning_electra/spanbert/xlm.py): corpus splits and tables."""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "training")]

import tensorflow as tf  # noqa: E402


def split_corpus_documents(folder: Path, heldout_fraction: float = 0.1) -> tuple[Path, Path]:
    """The bundled WEB corpus as train / held-out text files: the last chapters of every 10 are held out."""
    import tfbert.corpus

    train, heldout = [], []
    document: list[str] = []
    index = 0
    with __import__("gzip").open(tfbert.corpus.path(), "rt", encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line:
                document.append(line)
                continue
            if document:
                (heldout if index % int(round(1 / heldout_fraction)) == 9 else train).append(document)
                index += 1
                document = []
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "train.txt", folder / "heldout.txt"
    for path, documents in zip(paths, (train, heldout)):
        path.write_text("\n\n".join("\n".join(d) for d in documents) + "\n", encoding="utf-8")
    return paths


def frozen(dataset: tf.data.Dataset, batches: int) -> tf.data.Dataset:
    """The first `batches` batches, cached so that every evaluation sees the same masks."""
    cached = dataset.take(batches).cache()
    for _ in cached:
        pass
    return cached


def evaluate(model, dataset) -> dict[str, float]:
    return {name: float(value) for name, value in model.evaluate(dataset, verbose=0, return_dict=True).items()}


def machine() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores visible, TF {tf.__version__}, {time.strftime('%Y-%m-%d')}"


def table(rows: list[tuple], header: tuple) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
