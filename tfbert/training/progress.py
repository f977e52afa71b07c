"""One line of progress every few steps, for logs that are not a terminal.

Keras' progress bar (`verbose=1`) redraws a line with carriage returns, which
floods files and Colab cell outputs captured as text; this callback prints
`step 1200/100000  loss 2.3141  mlm_accuracy 0.4012  3.52 steps/s` instead.
"""

from __future__ import annotations

import sys
import time

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
