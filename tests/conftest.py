"""Shared pytest fixtures: quiet TensorFlow logs and locate the real assets."""

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# `--precision auto` on a CPU compares matmul peaks; tests state equal ones (float32) instead of timing.
os.environ.setdefault("TFBERT_MATMUL_PEAKS", "100,100")

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402

from assets import asset  # noqa: E402


@pytest.fixture(scope="session")
def assets():
    """`assets("minilm/vocab.txt")` gives the path of a fetched asset (see tests/assets.py)."""
    return asset
