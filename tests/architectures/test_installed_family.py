"""A family from outside tfbert, installed the standard way: docs/adding-an-architecture.md's ERNIE package.

The page's file blocks (each opens with `# tfbert-ernie/<path>`) are written into a temporary folder, pip installs
that distribution into another one (its entry point in the group `tfbert.families`), and processes with that folder
on their path run the commands and the whole conformance suite on the family, no file of tfbert edited.
"""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import command_server

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "adding-an-architecture.md"
FILE_HEADER = re.compile(r"^# tfbert-ernie/(?P<path>\S+)\n")


def guide_files() -> dict[str, str]:
    """`{path in the distribution: text}` of the guide's blocks that open with a `# tfbert-ernie/PATH` line."""
    spec = importlib.util.spec_from_file_location("guide_blocks", ROOT / "tests" / "docs" / "guide_blocks.py")
    module = sys.modules.setdefault("guide_blocks", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    headed = (FILE_HEADER.match(block.code) for block in module.blocks(GUIDE))
    return {match["path"]: match.string for match in headed if match}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    """The environment of a process that has tfbert-ernie installed (in a temporary site folder) and this checkout."""
    source = tmp_path_factory.mktemp("tfbert-ernie")
    for path, text in guide_files().items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text(text, encoding="utf-8")
    site = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(site), str(source)], check=True, capture_output=True)
    environment = command_server.checkout_environment()
    return {**environment, "PYTHONPATH": f"{site}:{environment['PYTHONPATH']}", "TF_CPP_MIN_LOG_LEVEL": "3"}


def test_the_guide_holds_the_whole_distribution():
    assert sorted(guide_files()) == ["pyproject.toml", "tfbert_ernie/__init__.py", "tfbert_ernie/configs/ernie_tiny.yaml",
                                     "tfbert_ernie/formats.py", "tfbert_ernie/spec.py"]


# Runs in a fresh interpreter with the family installed: each command as `tfbert` runs it, their outputs as JSON.
COMMANDS = """
import contextlib, io, json, sys
from tfbert.cli import main

corpus, tokenizer, work = sys.argv[1:]
shown = {}
def run(name, *argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main([str(word) for word in argv])
    shown[name] = [status, out.getvalue()]

run("configs", "configs", "--architecture", "ernie")
run("pretrain", "pretrain", "--config", "ernie_tiny", "--tokenizer", tokenizer, "--data", corpus, "--model-dir",
    f"{work}/run", "--objectives", "mlm", "--steps", "2", "--batch-size", "2", "--sequence-length", "16",
    "--max-predictions", "2", "--checkpoint-every", "2", "--strategy", "cpu", "--seed", "0")
run("export", "export", f"{work}/run", "--name", "ernie", "--output-dir", f"{work}/saved")
run("predict", "predict", f"{work}/saved/ernie", "A man is [MASK] a guitar.")
print(json.dumps(shown))
"""
# A process that has not imported the family: `import tfbert` alone lets Keras find what the run saved.
LOAD = """
import sys, tfbert, keras
encoder = keras.models.load_model(sys.argv[1])
print(type(encoder).__name__, encoder.architecture, tfbert.load_config("ernie_tiny").architecture)
"""


@pytest.mark.slow
def test_the_commands_and_keras_see_the_installed_family(installed, assets, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(["A man is playing a guitar.\nThe quick brown fox jumps over the lazy dog."] * 6),
                      encoding="utf-8")
    tokenizer = Path(assets("minilm/vocab.txt")).parent
    result = subprocess.run([sys.executable, "-c", COMMANDS, str(corpus), str(tokenizer), str(tmp_path)],
                            env=installed, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    shown = json.loads(result.stdout.splitlines()[-1])
    assert {name: status for name, (status, _) in shown.items()} == dict.fromkeys(shown, 0)
    assert [line.split()[:2] for line in shown["configs"][1].splitlines()[1:]] == [["ernie_tiny", "ernie"]]
    assert yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["architecture"] == "ernie"
    assert "mask 1:" in shown["predict"][1]

    loaded = subprocess.run([sys.executable, "-c", LOAD, str(tmp_path / "run" / "encoder" / "encoder.keras")],
                            env=installed, capture_output=True, text=True)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert loaded.stdout.split() == ["Encoder", "ernie", "ernie"]


@pytest.mark.slow
def test_the_whole_conformance_suite_runs_on_the_installed_family(installed):
    # Every check of every conformance file (a parametrized one runs once or more).
    checks = [line for path in (ROOT / "tests" / "conformance").glob("test_*.py")
              for line in path.read_text().splitlines() if line.startswith("def test_")]
    result = subprocess.run([sys.executable, "-m", "pytest", "tests/conformance", "-k", "ernie", "-q", "-n", "0",
                             "-p", "no:cacheprovider", "-rs"], cwd=ROOT, env=installed, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
    passed = re.search(r"(\d+) passed", result.stdout)
    assert passed and int(passed[1]) >= len(checks) and "skipped" not in result.stdout, result.stdout[-2000:]
