"""The documentation site builds with `mkdocs build --strict`: every nav page exists, every link and anchor
resolves, the generated CLI, API and benchmarks pages render, and no docstring breaks the API reference."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_site_builds_strictly_with_generated_pages(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
    cli = (tmp_path / "cli" / "index.html").read_text(encoding="utf-8")
    assert "tfbert pretrain" in cli and "tfbert evaluate sts" in cli and "tfbert vocab add" in cli
    assert (tmp_path / "api" / "models" / "index.html").exists()
    benchmarks = (tmp_path / "benchmarks" / "index.html").read_text(encoding="utf-8")
    for table in sorted((ROOT / "benchmarks" / "results").glob("*.md")):
        title = table.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").split(" (")[0]
        assert title.split(",")[0] in benchmarks, table.name
