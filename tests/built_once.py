"""`built_once`: an expensive test artefact built once per test run and shared by the pytest-xdist workers.

Session-scoped fixtures run once per worker, so with `pytest -n 2` two workers would each build the
same SavedModels. Here the first worker to ask builds into the run's shared temporary folder, under a
file lock, and records the result; the other waits for the lock and reads the record. Without xdist
it is a plain build into a fresh temporary folder (the parent folder then outlives the run).

Example:
    >>> paths = built_once(tmp_path_factory, "exports", lambda folder: {"a": str(folder / "a")})
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest
from filelock import FileLock


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]) -> Any:
    """`build(folder)`'s JSON-serialisable result, built by one worker of this run and read by the others."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return build(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent   # this run's folder, one level above each worker's own
    folder, record = shared / name, shared / f"{name}.json"
    with FileLock(str(shared / f"{name}.lock")):
        if record.is_file():
            return json.loads(record.read_text(encoding="utf-8"))
        shutil.rmtree(folder, ignore_errors=True)     # a worker that failed midway left half a build
        folder.mkdir()
        result = build(folder)
        record.write_text(json.dumps(result), encoding="utf-8")
    return result
