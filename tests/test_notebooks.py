"""Every `colab/*.ipynb` runs end to end in its smoke setting, so none of them rots.

Each notebook is executed by `nbclient` in a fresh python3 kernel of the interpreter running the
tests, with `TFBERT_SMOKE=1` (a tiny model, a few steps, local data: the bundled corpus and the
test assets), in a temporary working directory, importing tfbert from this checkout; the TPU notebook
on Keras' JAX backend (`TFBERT_BACKEND=jax`), the route it takes on a TPU runtime. A failing
cell fails the test with its source and error.
"""

import json
import os
import re
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

pytestmark = pytest.mark.end_to_end

ROOT = Path(__file__).parents[1]
NOTEBOOKS = sorted((ROOT / "colab").glob("*.ipynb"))
# The TPU notebook takes the JAX route on a TPU runtime; its CPU smoke path runs on JAX here too.
BACKENDS = {"pretrain_albert_tpu": "jax"}
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
# What each notebook prints when its last steps ran.
EXPECTED = {
    "pretrain_albert_tpu": ["backend: jax", "SMOKE run", "step 10/10", "held-out MLM accuracy",
                            "encoder/encoder.keras"],
    "finetune_glue_export": ["SMOKE run", "best epoch", ": accuracy", "exported saved_models/sst2/1", "serving_default"],
    "convert_huggingface_export": ["SMOKE run", "22,713,216 parameters", "closest:", "largest difference from transformers"],
}


def test_the_three_notebooks_are_there_and_stored_without_outputs():
    assert [path.name for path in NOTEBOOKS] == [
        "convert_huggingface_export.ipynb",
        "finetune_glue_export.ipynb",
        "pretrain_albert_tpu.ipynb",
    ]
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert code and notebook.cells[0].cell_type == "markdown", path.name
        assert all(not cell.outputs and cell.execution_count is None for cell in code), f"{path.name} has stored outputs"
        assert "resolve_strategy(\"auto\")" in code[0].source and "SMOKE" in code[0].source, path.name


@pytest.fixture
def python3_kernel(tmp_path, monkeypatch):
    """A `python3` kernel spec that starts this interpreter, found before any other (JUPYTER_PATH)."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (tests)",
        "language": "python",
    }))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs_in_its_smoke_setting(path, python3_kernel, tmp_path, monkeypatch, assets):
    assets("minilm/config.json")  # fail early, with the fetch command, when the test assets are missing
    monkeypatch.setenv("TFBERT_SMOKE", "1")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TFBERT_BACKEND", BACKENDS.get(path.stem, "tensorflow"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    workdir = tmp_path / "work"
    workdir.mkdir()
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, kernel_name=python3_kernel, timeout=500, startup_timeout=180, allow_errors=False,
                            resources={"metadata": {"path": str(workdir)}})
    started = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as error:
        pytest.fail(f"{path.name}: a cell failed\n{ANSI_ESCAPE.sub('', str(error))}", pytrace=False)
    print(f"{path.name}: {time.perf_counter() - started:.1f} s")
    output = "\n".join(ANSI_ESCAPE.sub("", output.get("text", "")) for cell in notebook.cells
                       if cell.cell_type == "code" for output in cell.outputs)
    missing = [text for text in EXPECTED[path.stem] if text not in output]
    assert not missing, f"{path.name} did not print {missing}:\n{output}"
