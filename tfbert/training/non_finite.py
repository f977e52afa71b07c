"""Stop training at the first NaN or infinite loss (or weight), before anything is saved from it.

`StopOnNonFinite` is the first callback of every `fit` tfbert runs (pretraining, fine-tuning, sentence
embeddings, distillation). It reads the losses of each step (`loss` and every `*_loss`: the running means Keras logs,
so one non-finite step makes them non-finite for the rest of the epoch) and, at the end of each epoch, before
any checkpoint or "best" model is written, that every weight is finite: a NaN gradient on the last
step of an epoch shows in the weights before it shows in a loss. It then raises
`NonFiniteTrainingError` (a `ValueError`), whose one line names the step, the last finite
checkpoint, which is kept, and what to do.

Keras' own `TerminateOnNaN` only sets `stop_training`, after which `fit` returns normally and the
caller saves the NaN model; this one raises instead.

Example:
    >>> import numpy as np
    >>> from tfbert.training.checkpointing import CheckpointEveryEpoch, TrainingCheckpoint
    >>> model = keras.Sequential([keras.layers.Dense(1)])
    >>> model.compile(optimizer="adamw", loss="mse")
    >>> model.build((None, 2)); model.optimizer.build(model.trainable_variables)
    >>> state = TrainingCheckpoint("runs/a", model, model.optimizer)
    >>> x, y = np.ones((8, 2)), np.array([[1.0]] * 4 + [[np.nan]] * 4)     # a NaN label in the second epoch
    >>> model.fit(x, y, batch_size=2, epochs=2, steps_per_epoch=2, shuffle=False, verbose=0,
    ...           callbacks=[StopOnNonFinite(lambda: state.latest), CheckpointEveryEpoch(state, 2)])
    Traceback (most recent call last):
    tfbert.training.non_finite.NonFiniteTrainingError: the loss became NaN at step 3; the last finite checkpoint is runs/a/ckpt-2, which is kept; ...
"""

from __future__ import annotations

import math
from typing import Callable

import keras
import numpy as np

ADVICE = "lower the learning rate (--learning-rate) or check the data for extreme values"


class NonFiniteTrainingError(ValueError):
    """Training met a NaN or infinite loss or weight; nothing was saved from that step on."""


def _describe(value: float) -> str:
    return "NaN" if math.isnan(value) else "infinite"


def weights_are_finite(model: keras.Model) -> bool:
    """Whether every trainable weight of `model` is finite (no NaN, no infinity).

    Checked on the host in NumPy: on JAX each `keras.ops` call on a weight of a new shape compiles a program of
    its own, which made the first check of a run cost seconds."""
    return all(np.isfinite(keras.ops.convert_to_numpy(weight)).all() for weight in model.trainable_weights)


class StopOnNonFinite(keras.callbacks.Callback):
    """Raises `NonFiniteTrainingError` at the first non-finite loss, or non-finite weight at an epoch's end.

    `last_checkpoint()` names the newest saved state (None: nothing saved yet); `first_step` is the step
    this `fit` call starts at (a resumed run's), so the message counts steps as the run does.

    Example:
        >>> callback = StopOnNonFinite(lambda: None)
        >>> callback.message("NaN", 7)
        'the loss became NaN at step 7; no checkpoint was written before it; nothing was saved from it; ...'
    """

    async_safe = True   # reads only its own logs: Keras may call it off the training thread

    def __init__(self, last_checkpoint: Callable[[], str | None], first_step: int = 0):
        super().__init__()
        self.last_checkpoint, self.first_step = last_checkpoint, first_step
        self._epochs_done = 0

    def on_train_begin(self, logs=None):
        self._epochs_done = 0

    def on_train_batch_end(self, batch, logs=None):
        for name, value in (logs or {}).items():
            if (name == "loss" or name.endswith("_loss")) and not math.isfinite(float(value)):
                raise NonFiniteTrainingError(self.message(_describe(float(value)), self._step(batch)))

    def on_epoch_end(self, epoch, logs=None):
        if not weights_are_finite(self.model):
            last_batch = (self.params.get("steps") or 1) - 1
            raise NonFiniteTrainingError(self.message("NaN or infinite", self._step(last_batch), "weights"))
        self._epochs_done += 1

    def _step(self, batch: int) -> int:
        steps_per_epoch = self.params.get("steps")
        if not steps_per_epoch:   # a dataset of unknown length: the optimizer's count
            return self.first_step + int(self.model.optimizer.iterations)
        return self.first_step + self._epochs_done * steps_per_epoch + batch + 1

    def message(self, what: str, step: int, subject: str = "loss") -> str:
        """`the loss became NaN at step N; the last finite checkpoint is ...; lower the learning rate ...`."""
        latest = self.last_checkpoint()
        kept = f"the last finite checkpoint is {latest}, which is kept" if latest else \
            "no checkpoint was written before it"
        return f"the {subject} became {what} at step {step}; {kept}; nothing was saved from it; {ADVICE}"
