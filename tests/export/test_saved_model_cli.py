"""`saved_model_cli` (TF 2.21's, from the venv) lists the signatures and runs `serving_default`."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.end_to_end

SAVED_MODEL_CLI = shutil.which("saved_model_cli") or str(Path(sys.executable).with_name("saved_model_cli"))


def _cli(*args: str) -> str:
    completed = subprocess.run([SAVED_MODEL_CLI, *args], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def _cli_with_tf_text(*args: str) -> str:
    """saved_model_cli's own entry point, with TF-Text's ops registered first (the plain script lacks them)."""
    program = ("import sys, tensorflow_text; from tensorflow.python.tools.saved_model_cli import main; "
               "sys.argv[0] = 'saved_model_cli'; sys.exit(main())")
    completed = subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def test_show_lists_every_signature(exports):
    shown = _cli("show", "--dir", str(exports["classification"]), "--all")
    for signature in ("serving_default", "tokenize", "preprocess", "encode"):
        assert f"signature_def['{signature}']" in shown
    for name in ("text", "text_pair", "logits", "probabilities", "label", "input_word_ids", "sequence_output"):
        assert f"['{name}']" in shown


@pytest.mark.slow
def test_run_serving_default(exports):
    output = _cli_with_tf_text("run", "--dir", str(exports["classification"]), "--tag_set", "serve",
                  "--signature_def", "serving_default",
                  "--input_exprs", "text=[b'a great film', b''];text_pair=[b'yes', b'no']")
    assert "Result for output key label" in output and "Result for output key probabilities" in output
