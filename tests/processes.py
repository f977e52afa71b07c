"""`tfbert` commands and Python scripts in child processes, for the tests whose point is a process: a signal, a kill,
a fresh start.

`start_tfbert(argv)` runs `tfbert ARGV` (with Python's INFO logging shown), and `start_python(script, ...)` a Python
script, in a process of its own forked from the tests' command server (an interpreter that imported tfbert's stack
once, `command_server.py`), with its output in files (a pipe nobody reads could fill and stall the child).
`signal_when(process, ready, signal)` sends a signal once `ready()` holds (a file appears: never after a fixed
sleep) and returns how the child ended.
`write_tiny_run_inputs(folder, novel)` writes what such a child pretrains on in seconds.

Example:
    >>> child = start_tfbert(["vocab", "--kind", "wordpiece", "--data", "c.txt", "--output", "v"])  # doctest: +SKIP
    >>> signal_when(child, lambda: os.path.exists(".tfbert-lock-v"), signal.SIGTERM).status  # doctest: +SKIP
    143
"""

from __future__ import annotations

import dataclasses
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

from command_server import Command, shared_server


@dataclasses.dataclass
class Ended:
    """How a child ended: its exit status (minus the signal's number when a signal killed it) and its output."""

    status: int
    stdout: str
    stderr: str

    @property
    def last_line(self) -> str:
        """The last line of stderr ('' when it wrote none)."""
        lines = self.stderr.strip().splitlines()
        return lines[-1] if lines else ""


class Child(Command):
    """A child (a `tfbert` command or a Python script) whose stdout and stderr go to temporary files, read by
    `ended()`."""

    def ended(self, timeout_s: float = 600) -> Ended:
        """Waits for the child; its status and output."""
        status = self.wait(timeout_s)
        if status is None:
            self.send_signal(signal.SIGKILL)
            raise AssertionError(f"the child (pid {self.pid}) still ran after {timeout_s} s; it was killed")
        outputs = []
        for file in (self.stdout_file, self.stderr_file):
            file.seek(0)
            outputs.append(file.read())
            file.close()
        return Ended(status, *outputs)


def start_tfbert(argv: Sequence[str]) -> Child:
    """`tfbert ARGV` started in a process of its own (this process's working folder and environment)."""
    return _start("tfbert", argv, log_level="INFO")


def start_python(script: str | Path, *arguments: str, cwd: str | Path | None = None,
                 env: dict[str, str] | None = None) -> Child:
    """`python SCRIPT ARGUMENTS` started in a process of its own, with `env`'s PYTHONPATH first on `sys.path`. The
    variables TensorFlow and Keras read when imported (KERAS_BACKEND, TF_USE_LEGACY_KERAS) are the server's: a
    script that sets them needs a new interpreter (`subprocess`). Logical devices can still be configured: no
    TensorFlow op ran before the fork."""
    return _start("python", [str(script), *arguments], cwd=cwd, env=env)


def _start(program: str, argv: Sequence[str], **options) -> Child:
    stdout_file = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
    stderr_file = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
    with open(os.devnull, encoding="utf-8") as stdin:
        child = Child.start(shared_server(), argv, stdio=(stdin.fileno(), stdout_file.fileno(), stderr_file.fileno()),
                            program=program, **options)
    child.stdout_file, child.stderr_file = stdout_file, stderr_file
    return child


def run_tfbert(argv: Sequence[str], timeout_s: float = 600) -> Ended:
    """`tfbert ARGV` in a process of its own, to its end."""
    return start_tfbert(argv).ended(timeout_s)


def signal_when(child: Child, ready: Callable[[], bool], signal_number: int, deadline_s: float = 600) -> Ended:
    """Sends `signal_number` to `child` as soon as `ready()` holds; how it ended. Fails if it ends first."""
    start = time.monotonic()
    while not ready():
        if child.poll() is not None:
            ended = child.ended()
            raise AssertionError(f"the command ended (status {ended.status}) before it could be signalled: "
                                 f"{ended.stderr[-3000:]}")
        assert time.monotonic() - start < deadline_s, "no progress to interrupt"
        time.sleep(0.002)
    child.send_signal(signal_number)
    return child.ended(deadline_s)


def write_tiny_run_inputs(folder: Path, novel: Path) -> Path:
    """`folder` with `corpus.txt` (the first 60 lines of `novel` as documents of 5 lines), a 200-token WordPiece
    `vocab/` and `tiny.yaml`, a one-layer BERT 32 wide."""
    from tfbert.config import load_config, save_config
    from tfbert.text.vocab_training import train_wordpiece

    lines = novel.read_text(encoding="utf-8").splitlines()[:60]
    (folder / "corpus.txt").write_text("\n".join(line for index, line in enumerate(lines)
                                                 for line in [line] + [""] * (index % 5 == 4)))
    train_wordpiece(str(folder / "corpus.txt"), 200, folder / "vocab")
    config = load_config("bert_tiny")
    save_config(config.replace(encoder=config.encoder.replace(hidden_size=32, num_heads=2, intermediate_size=64,
                                                              num_layers=1, embedding_size=32, max_positions=32,
                                                              vocab_size=200)), folder / "tiny.yaml")
    return folder
