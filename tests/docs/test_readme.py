"""README.md stays a front door: at most 250 lines, the stated test command, and the feature table as the registry
and the shipped configs make it (`docs/hooks/feature_table.py`), so no family can be left out."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def feature_table() -> str:
    spec = importlib.util.spec_from_file_location("feature_table", ROOT / "docs" / "hooks" / "feature_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.feature_table()


def test_readme_is_at_most_250_lines_and_names_the_two_commands():
    assert len(README.splitlines()) <= 250
    assert "tfbert quickstart" in README and "bash .ci/run" in README


def test_readme_feature_table_is_the_registry_s():
    table = feature_table()
    assert table in README, "README.md's feature table differs from the registry; paste `python docs/hooks/feature_table.py`"
    from tfbert import architectures

    for name in architectures.names():
        assert f"(`{name}`)" in table


RESULTS = ROOT / "benchmarks" / "results"


def test_the_quickstart_time_stated_is_the_one_measured():
    """The README and the getting-started page state the CPU and wall minutes quickstart-timing.md records."""
    import re

    recorded = re.search(r"^Recorded: `tfbert quickstart` \(defaults\) took (\d+\.\d) min of CPU time and (\d+\.\d) "
                         r"min of wall clock", (RESULTS / "quickstart-timing.md").read_text(encoding="utf-8"), re.M)
    assert recorded, "quickstart-timing.md has no 'Recorded: ...' line"
    cpu, wall = recorded.groups()
    for page in (README, (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")):
        assert f"{cpu} min of CPU time" in page and f"{wall} min" in page


def test_every_serving_row_names_a_text_length_bucket_the_benchmark_measures():
    """The README's serving figures say how long the texts were, in a bucket `benchmarks/serving_ort.py` measures."""
    import re

    measured = (RESULTS / "serving_ort.md").read_text(encoding="utf-8")
    rows = [line for line in README.splitlines() if line.startswith("| serving")]
    assert rows
    for row in rows:
        bucket = re.search(r"texts of up to (\d+) pieces", row)
        assert bucket, row
        assert f"## Texts of up to {bucket[1]} pieces" in measured, row
