"""Run a Python snippet in a process of its own and return the JSON it prints last.

Logical CPU devices must be configured before TensorFlow initialises its
devices, so tests that need two of them run in their own process: a fork of the
tests' command server (`processes.start_python`), or a new interpreter when the
snippet needs environment variables that TensorFlow or Keras read on import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from processes import start_python

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
    """Run `snippet`; it must print one JSON document as its last stdout line. With `env` (KERAS_BACKEND and the
    like, read on import) it runs in a new interpreter, else in a fork of the tests' command server."""
    snippet = textwrap.dedent(snippet)
    if env is None:
        with tempfile.TemporaryDirectory() as folder:
            script = Path(folder) / "snippet.py"
            script.write_text(snippet, encoding="utf-8")
            ended = start_python(script, cwd=REPOSITORY_ROOT, env=python_env()).ended(timeout)
        status, stdout, stderr = ended.status, ended.stdout, ended.stderr
    else:
        completed = subprocess.run([sys.executable, "-c", snippet], cwd=REPOSITORY_ROOT, env=python_env(env),
                                   capture_output=True, text=True, timeout=timeout)
        status, stdout, stderr = completed.returncode, completed.stdout, completed.stderr
    if status != 0:
        raise AssertionError(f"snippet failed with exit code {status}:\n{stderr[-6000:]}")
    lines = [line for line in stdout.splitlines() if line.strip()]
    return json.loads(lines[-1])
