"""`python -m benchmarks`: the tables it runs beside the installed peers, and the section it records; the installed
`tfbert` has no benchmark command (docs/benchmarks.md says why)."""

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.__main__ import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def without_keras_hub(monkeypatch):
    """`import keras_hub` raises ImportError, as on a machine without it."""
    monkeypatch.setitem(sys.modules, "keras_hub", None)


def table_rows(text: str, first_cell: str) -> list[list[str]]:
    return [line.strip("| ").split(" | ") for line in text.splitlines() if line.startswith(f"| {first_cell}")]


def test_tokenize_quick_appends_a_labelled_section_with_a_row_per_present_peer(without_keras_hub, tmp_path, capsys):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmarks\n\nearlier runs\n")

    assert main(["tokenize", "--quick", "--only", "WordPiece", "--results", str(results)]) == 0

    text = results.read_text()
    before, section = text.split("\n\n## `python -m benchmarks` run, ")
    assert before == "# Benchmarks\n\nearlier runs"
    assert "Machine: " in section and " cores, bfloat16 instructions: " in section
    assert "Load average (1, 5, 15 min): " in section and " before, " in section and " after." in section
    assert "not installed: keras-hub" in section
    assert f"Command: `python -m benchmarks tokenize --quick --only WordPiece --results {results}`" in section
    throughput, latency = section.split("### Tokenization, batch-1 latency")
    present = ["HF tokenizers encode_batch", "tfbert WordPieceTokenizer"]
    rows = table_rows(throughput, "WordPiece")
    assert [row[1] for row in rows] == present and [row[7] for row in rows] == ["reference", "yes"]
    assert rows[0][5:7] == ["1.00x", "1.00x"] and all(float(ratio.rstrip("x")) > 0 for ratio in rows[1][5:7])
    assert [row[1] for row in table_rows(latency, "WordPiece")] == present
    assert "skipped: keras-hub not installed" in section
    assert section.split("Date: ", 1)[1] in capsys.readouterr().out


def test_pipeline_quick_with_no_record_prints_and_writes_nothing(without_keras_hub, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)

    assert main(["pipeline", "--quick", "--no-record"]) == 0

    out = capsys.readouterr().out
    (row,) = table_rows(out, "tfbert.data")
    assert float(row[1].replace(",", "")) > 0 and row[3] == "-"
    assert "skipped: keras-hub not installed" in out and "recorded in" not in out
    assert list(tmp_path.iterdir()) == []


def test_results_in_a_missing_folder_is_refused_in_one_line_before_measuring(tmp_path, capsys):
    assert main(["tokenize", "--quick", "--results", str(tmp_path / "no" / "RESULTS.md")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("python -m benchmarks: error: cannot record in ")
    assert "pass --results PATH or --no-record" in error


def test_it_runs_as_a_module_of_the_clone_and_tfbert_has_no_benchmark_command():
    from tfbert.cli import COMMANDS

    assert "benchmark" not in COMMANDS
    shown = subprocess.run([sys.executable, "-m", "benchmarks", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: python -m benchmarks ")


def test_shard_table_gives_a_row_per_shard_count_with_its_speed_over_one_shard():
    from benchmarks.lab.tokenization import WORDPIECE, corpus, measure_shards

    table = measure_shards(corpus()[:128], batch_sizes=[64], repeats=1, shard_counts=[1, 2], only="WordPiece")
    assert [row[:3] for row in table.rows] == [[WORDPIECE, "64", "1"], [WORDPIECE, "64", "2"]]
    assert table.rows[0][5:] == ["1.00x", "1.00x"] and all(float(ratio.rstrip("x")) > 0 for ratio in table.rows[1][5:])
    assert table.columns[5:] == ["wall vs 1", "CPU vs 1"]
