"""Model code is pure `keras.ops`: no TensorFlow, no data-side imports, and it runs on another backend."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

MODEL_FILES = sorted((Path(__file__).parents[2] / "tfbert" / "models").glob("*.py"))
FORBIDDEN_PREFIXES = ("tensorflow", "tensorflow_text", "tfbert.data", "tfbert.text", "tfbert.distribute", "tfbert.export")


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.name)
def test_model_modules_import_no_tensorflow_and_no_data_side(path):
    tree = ast.parse(path.read_text())
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    offending = [name for name in imported if name.startswith(FORBIDDEN_PREFIXES)]
    assert not offending, f"{path.name} imports {offending}"


def test_encoder_and_heads_run_on_the_torch_backend():
    pytest.importorskip("torch")
    script = """
import numpy as np, keras
from tfbert.config import EncoderConfig, ModelConfig
from tfbert.models.pretraining import PretrainingModel
config = ModelConfig("albert", EncoderConfig(vocab_size=50, hidden_size=16, num_layers=2, num_heads=2,
                                              intermediate_size=32, embedding_size=8, sharing="all"))
model = PretrainingModel(config)
ids = np.ones((2, 6), "int32")
out = model({"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": ids, "masked_positions": ids[:, :2]})
print(keras.backend.backend(), tuple(out["mlm_logits"].shape), tuple(out["sop_logits"].shape))
"""
    env = {**os.environ, "KERAS_BACKEND": "torch"}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "torch (2, 2, 50) (2, 2)"
