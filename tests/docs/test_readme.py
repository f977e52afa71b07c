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
