"""The contributor's quick loop (`bash .ci/run -m "not slow and not end_to_end"`) keeps the conformance suite."""

import re
import subprocess
import sys
from pathlib import Path

QUICK = "not slow and not end_to_end"
ROOT = Path(__file__).resolve().parents[1]


def collected(*arguments: str) -> int:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           *arguments], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    count = re.search(r"(\d+)(?:/\d+)? tests? collected", done.stdout)
    assert count, done.stdout[-2000:] + done.stderr[-2000:]
    return int(count[1])


def test_the_quick_loop_runs_every_family_conformance_test():
    families = "tests/conformance/test_families.py"
    assert collected("-m", QUICK, families) == collected(families) > 0


def test_the_markers_of_the_quick_loop_are_declared_and_documented():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert all(f'"{marker}: ' in pyproject for marker in ("slow", "end_to_end"))
    for page in ("README.md", "docs/development.md"):
        assert f'bash .ci/run -m "{QUICK}"' in (ROOT / page).read_text(encoding="utf-8"), page
