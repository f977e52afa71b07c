"""The JAX benchmarks run: `benchmarks/gpu_jax_throughput.py --quick` where TensorFlow cannot be imported (a GPU
machine has JAX and PyTorch only), and `benchmarks/jax_vs_tensorflow.py` on bert_tiny. Their speeds are recorded in
benchmarks/RESULTS.md, never asserted here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NO_TENSORFLOW = """
import runpy, sys
class NoTensorFlow:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tensorflow", "tensorflow_text", "tf_keras"):
            raise ImportError(f"{name} must not be imported on a machine without TensorFlow")
sys.meta_path.insert(0, NoTensorFlow())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
print(sorted(name for name in sys.modules if name.split(".")[0] == "tensorflow"))
"""


def table_rows(output: str) -> list[list[str]]:
    """The Markdown table's body rows, cell by cell."""
    lines = [line for line in output.splitlines() if line.startswith("| ")][1:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def run(command: list[str]) -> str:
    """`command`'s output; the scripts choose their Keras backends themselves."""
    env = {name: value for name, value in os.environ.items() if name != "KERAS_BACKEND"}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**env, "TF_CPP_MIN_LOG_LEVEL": "3"},
                          timeout=500)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


@pytest.mark.slow
def test_gpu_benchmark_dry_run_trains_and_counts_flops_without_tensorflow():
    output = run([sys.executable, "-c", NO_TENSORFLOW, "benchmarks/gpu_jax_throughput.py", "--quick",
                  "--peak-tflops", "0.5"])
    assert output.strip().splitlines()[-1] == "[]"                   # no TensorFlow module was imported
    [row] = table_rows(output)
    model, length, batch, sequences, _, tflops, share, xla_over_formula = row
    assert (model, length, batch) == ("bert_tiny", "32", "2") and float(sequences) > 0
    assert share == f"{float(tflops) / 0.5:.0%}"
    # XLA's count of the lowered step (elementwise ops and AdamW included) is at least the matmuls counted.
    assert 1.0 <= float(xla_over_formula) < 1.5
    assert "FLOPs/step = 6 x batch x" in output


@pytest.mark.slow
def test_jax_against_tensorflow_benchmark_prints_both_backends():
    output = run([sys.executable, "benchmarks/jax_vs_tensorflow.py", "--configs", "bert_tiny", "--batch-size", "2",
                  "--steps", "2", "--warmup", "1", "--rounds", "1"])
    [row] = table_rows(output)
    jax_rate, tensorflow_rate, ratio = float(row[1]), float(row[2]), row[3]
    assert row[0] == "bert_tiny" and jax_rate > 0 and tensorflow_rate > 0
    assert float(ratio.strip("*x")) == pytest.approx(jax_rate / tensorflow_rate, rel=0.02)
    assert "JAX 0." in output and "TensorFlow 2." in output
