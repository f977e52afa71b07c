"""`import tfbert`: the public names, imported lazily, and the docstring examples that show them."""

import doctest
import os
import subprocess
import sys

import tfbert
from tfbert.architectures import registry


def test_docstring_examples_run():
    for module in (tfbert, registry):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted and not result.failed, module.__name__


def test_every_public_name_resolves():
    assert set(tfbert.__all__) <= set(dir(tfbert))
    for name in tfbert.__all__:
        assert getattr(tfbert, name) is not None, name


def test_import_tfbert_imports_no_tensorflow_until_a_tensorflow_part_is_used():
    """With Keras on JAX, the encoder and the pretraining models come without TensorFlow."""
    script = """
import sys
import tfbert
assert "keras" not in sys.modules and "tensorflow" not in sys.modules, "import tfbert imported a framework"
config = tfbert.load_config("bert_tiny")
tfbert.architectures.get("albert")
assert "keras" not in sys.modules, "configs and the registry imported keras"
tfbert.Encoder, tfbert.build_encoder, tfbert.PretrainingModel
print("keras" in sys.modules, "tensorflow" in sys.modules)
"""
    environment = {**os.environ, "KERAS_BACKEND": "jax", "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-2:] == ["True", "False"]
