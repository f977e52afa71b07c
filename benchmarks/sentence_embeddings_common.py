"""What the sentence-embedding benchmarks share: MiniLM from the test assets as a tfbert model and as a
sentence-transformers model (mean pooling, unit length), texts, step timing and the machine line.

Run as scripts, `embedding_serving.py`, `embedding_training.py` and `distillation_quality.py` put the
repository root and `tests/` on `sys.path` before importing this module.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from pathlib import Path

from assets import asset

MINILM_DIMENSION = 384


def minilm_folder() -> Path:
    """all-MiniLM-L6-v2 (Hugging Face folder) from the test assets."""
    return asset("minilm/config.json").parent


def sentence_transformer(folder: Path, max_length: int):
    """sentence-transformers' all-MiniLM-L6-v2 pipeline: BERT, mean pooling, L2 normalisation, on the CPU."""
    from sentence_transformers import SentenceTransformer, models

    transformer = models.Transformer(str(folder), max_seq_length=max_length)
    return SentenceTransformer(modules=[transformer, models.Pooling(MINILM_DIMENSION, "mean"), models.Normalize()],
                               device="cpu")


def botchan_lines(count: int, shortest: int = 40, longest: int = 400) -> list[str]:
    """`count` lines of Botchan (the test assets) of `shortest`..`longest` characters, repeated as needed."""
    lines = [line.strip() for line in asset("text/botchan.txt").read_text(encoding="utf-8").splitlines()]
    lines = [line for line in lines if shortest <= len(line) <= longest]
    return (lines * (count // len(lines) + 1))[:count]


def bible_pairs(count: int, seed: int = 0) -> list[tuple[str, str]]:
    """`count` (English KJV, Spanish Reina-Valera) verse pairs, shuffled with `seed` (SWORD modules, test assets)."""
    import numpy as np

    from tfbert.data.sword import ZTextModule, aligned_verses

    folder = asset("sword/modules/texts/ztext")
    pairs = [(en, es) for _, en, es in aligned_verses(ZTextModule(folder / "engKJV2006eb"),
                                                       ZTextModule(folder / "spaRV1909eb"))]
    order = np.random.default_rng(seed).permutation(len(pairs))[:count]
    return [pairs[index] for index in order]


class StepTimes:
    """Wall-clock times of training steps; `steps_per_second(skip)` leaves out the first `skip` (tracing, warm-up)."""

    def __init__(self):
        self.times = [time.perf_counter()]

    def step(self) -> None:
        self.times.append(time.perf_counter())

    def steps_per_second(self, skip: int) -> float:
        durations = [b - a for a, b in zip(self.times[skip:], self.times[skip + 1:])]
        return 1.0 / statistics.median(durations)


def machine() -> str:
    """The processor, cores, load and date, for the results' header."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.machine())
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return f"{model}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}, uptime: {uptime}"
