"""Run a Python snippet in a fresh interpreter and return the JSON it prints last.

Logical CPU devices must be configured before TensorFlow initialises its
devices, so tests that need two of them run in their own process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
HELPERS_DIR = Path(__file__).resolve().parent

TWO_LOGICAL_CPUS = """
import tensorflow as tf
_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
"""


def python_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPOSITORY_ROOT), str(HELPERS_DIR), env.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(extra or {})
    return env


def run_python_json(snippet: str, *, timeout: float = 180, env: dict | None = None):
    """Run `snippet`; it must print one JSON document as its last stdout line."""
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(snippet)],
        cwd=REPOSITORY_ROOT,
        env=python_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if completed.returncode != 0:
        raise AssertionError(
            f"snippet failed with exit code {completed.returncode}:\n{completed.stderr[-6000:]}"
        )
    lines = [line for line in completed.stdout.splitlines() if line.strip()]
    return json.loads(lines[-1])
