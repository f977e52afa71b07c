"""One line of progress every few steps, for logs that are not a terminal.

Keras' progress bar (`verbose=1`) redraws a line with carriage returns, which
floods files and Colab cell outputs captured as text; this callback prints
`step 1200/100000  loss 2.3141  mlm_accuracy 0.4012  3.52 steps/s` instead.
`TrainingClock` says at the end where a run's time went: how long the process took to
reach its first step (imports, data, model, compilation) and the steps/s after it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import keras


def stdout_is_terminal() -> bool:
    return hasattr(sys.stdout, "isatty") and sys.stdout.isatty()


class StepLogger(keras.callbacks.Callback):
    """Print the global step, the logged metrics and the speed every `every` steps.

    Example:
        >>> logger = StepLogger(total_steps=100, every=10)
        >>> logger.format_line(20, {"loss": 1.5}, 2.0)
        'step 20/100  loss 1.5000  2.00 steps/s'
    """

    def __init__(self, total_steps: int, every: int = 100, first_step: int = 0, print_fn=print):
        super().__init__()
        self.total_steps = total_steps
        self.every = max(int(every), 1)
        self.first_step = first_step
        self.print_fn = print_fn
        self._steps_per_epoch = None
        self._first_epoch = None
        self._epoch = 0
        self._last_logged = (first_step, time.perf_counter())

    def on_train_begin(self, logs=None):
        self._steps_per_epoch = self.params.get("steps")
        self._last_logged = (self.first_step, time.perf_counter())

    def on_epoch_begin(self, epoch, logs=None):
        if self._first_epoch is None:
            self._first_epoch = epoch
        self._epoch = epoch - self._first_epoch

    def on_train_batch_end(self, batch, logs=None):
        step = self.first_step + self._epoch * (self._steps_per_epoch or 0) + batch + 1
        last_step, last_time = self._last_logged
        if step - last_step < self.every and step != self.total_steps:
            return
        now = time.perf_counter()
        speed = (step - last_step) / max(now - last_time, 1e-9)
        self._last_logged = (step, now)
        self.print_fn(self.format_line(step, logs or {}, speed))

    def format_line(self, step: int, logs: dict, steps_per_second: float) -> str:
        metrics = "  ".join(f"{name} {float(value):.4f}" for name, value in logs.items())
        parts = [f"step {step}/{self.total_steps}", metrics, f"{steps_per_second:.2f} steps/s"]
        return "  ".join(part for part in parts if part)


def process_age() -> float:
    """Seconds since this process started (Linux `/proc`); 0.0 where that is unknown."""
    try:
        start_ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 0.0)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


class TrainingClock(keras.callbacks.Callback):
    """Time from the process's start to the end of the first training step, and the steps/s after it.

    The first step carries the imports, reading the data, building and compiling the model and
    filling the input pipeline's buffers; the steady rate counts the steps after it (their own
    time: evaluation and checkpoints between epochs are left out).

    Example:
        >>> clock = TrainingClock()
        >>> clock.first_step_seconds, clock.steps = 41.2, 20
        >>> clock.step_seconds = 5.4
        >>> clock.summary()
        'time to first step 41.2 s; 3.52 steps/s over the 19 steps after it'
    """

    def __init__(self):
        super().__init__()
        self.started = time.perf_counter() - process_age()
        self.first_step_seconds: float | None = None
        self.steps = 0
        self.step_seconds = 0.0
        self._batch_started = 0.0
        self._last_batch = -1

    def on_epoch_begin(self, epoch, logs=None):
        self._last_batch = -1

    def on_train_batch_begin(self, batch, logs=None):
        self._batch_started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        steps = max(batch - self._last_batch, 1)   # a call covers steps_per_execution steps
        self._last_batch = batch
        if self.first_step_seconds is None:
            self.first_step_seconds = now - self.started
            steps_after_first = steps - 1
        else:
            steps_after_first = steps
        self.steps += steps
        if steps_after_first:
            self.step_seconds += (now - self._batch_started) * steps_after_first / steps

    def summary(self) -> str:
        """`time to first step 41.2 s; 3.52 steps/s over the 19 steps after it` (what is known so far)."""
        if self.first_step_seconds is None:
            return "no training step was made"
        line = f"time to first step {self.first_step_seconds:.1f} s"
        after = self.steps - 1
        if after and self.step_seconds > 0:
            line += f"; {after / self.step_seconds:.2f} steps/s over the {after} steps after it"
        return line
