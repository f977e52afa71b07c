"""Model code is pure `keras.ops`: no TensorFlow, no data-side imports, and it runs on another backend."""

import ast
from pathlib import Path

import pytest
from model_fixtures import run_on_backend

MODEL_FILES = sorted((Path(__file__).parents[2] / "tfbert" / "models").glob("*.py"))
FORBIDDEN_PREFIXES = ("tensorflow", "tensorflow_text", "tfbert.data", "tfbert.text", "tfbert.distribute", "tfbert.export")


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.name)
def test_model_modules_import_no_tensorflow_and_no_data_side(path):
    tree = ast.parse(path.read_text())
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    offending = [name for name in imported if name.startswith(FORBIDDEN_PREFIXES)]
    assert not offending, f"{path.name} imports {offending}"


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_encoder_and_heads_run_on_another_backend(backend):
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
    assert run_on_backend(backend, script) == f"{backend} (2, 2, 50) (2, 2)"


def test_bfloat16_train_steps_compile_and_learn_on_jax_without_tensorflow():
    """The path of benchmarks/train_throughput_jax.py on a GPU machine, which has JAX and no TensorFlow."""
    script = """
import sys
class NoTensorFlow:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tensorflow", "tensorflow_text"):
            raise ImportError(f"{name} must not be imported on the JAX path")
sys.meta_path.insert(0, NoTensorFlow())
import numpy as np, keras
from tfbert.config import EncoderConfig, ModelConfig
from tfbert.models.pretraining import PretrainingModel
keras.mixed_precision.set_global_policy("mixed_bfloat16")
keras.utils.set_random_seed(0)
config = ModelConfig("bert", EncoderConfig(vocab_size=40, hidden_size=32, num_layers=2, num_heads=2,
                                            intermediate_size=64, max_positions=16, dropout_rate=0.1))
model = PretrainingModel(config)
model.compile(optimizer=keras.optimizers.Adam(1e-2), jit_compile=True)
rng = np.random.default_rng(0)
ids = rng.integers(5, 40, (8, 16)).astype("int32")
inputs = {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": 1 + 0 * ids,
          "masked_positions": np.tile(np.arange(1, 5, dtype="int32"), (8, 1))}
labels = {"masked_ids": ids[:, 1:5], "masked_weights": np.ones((8, 4), "float32"),
          "nsp_labels": rng.integers(0, 2, 8).astype("int32")}
losses = [float(model.train_on_batch(inputs, labels, return_dict=True)["loss"]) for _ in range(30)]
print(model.encoder.compute_dtype, model.encoder.variable_dtype, losses[-1] < 0.5 * losses[0])
"""
    assert run_on_backend("jax", script) == "bfloat16 float32 True"
