"""`TrainingDevices`: what a trainer needs to know of the backend and its devices (see `tfbert.training.backends`)."""

from __future__ import annotations

from typing import ContextManager, Protocol

import keras
import tensorflow as tf

from tfbert.distribute.data import DatasetFn


class RunState(Protocol):
    """A run's checkpoints: `latest` (the newest complete one's path), `restore()` (its step, 0 without one),
    `save(step)`, and `chief` (whether this process writes the run folder)."""

    chief: bool

    @property
    def latest(self) -> str | None: ...

    def restore(self) -> int: ...

    def save(self, step: int) -> str: ...


class TrainingDevices(Protocol):
    """The devices a run trains on, and what the shared driver asks of them.

    Attributes:
        name: `tensorflow` or `jax`.
        replicas: how many devices split each batch (its size must be a multiple of it).
        processes: processes (hosts) feeding the run; each reads its own shard.
        one_host: whether one process feeds every device (the first pipeline built is then reused).
    """

    name: str
    replicas: int
    processes: int
    one_host: bool

    def describe(self) -> str:
        """One line: the backend, the devices and how the model is split over them."""

    def scope(self) -> ContextManager:
        """The context the model and the optimizer are built in."""

    def check_batch(self, global_batch_size: int, accumulation: int) -> None:
        """`ValueError` where the global batch (or gradient accumulation) does not fit these devices."""

    def precision(self, requested: str, hidden_size: int | None = None) -> str:
        """The Keras dtype policy to train with (`auto` decided for this hardware and model width)."""

    def jit_compile(self, requested: bool | str, policy: str, steps: int | None = None) -> bool:
        """Whether the train step is compiled with XLA."""

    def finetune_jit_compile(self, requested: bool | str | None) -> bool:
        """Whether a fine-tuning step is compiled (`None` and `auto`: the backend's default for short runs)."""

    def steps_per_execution(self, requested: int) -> int:
        """The steps per compiled call these devices can run."""

    def pipeline_batch_size(self, global_batch_size: int) -> int:
        """The batch one input pipeline yields."""

    def input_context(self) -> tf.distribute.InputContext:
        """This process's first input pipeline (the shard it reads)."""

    def prepare(self, model: keras.Model) -> None:
        """What the model needs before it is compiled (losses over the global batch)."""

    def after_build(self, model: keras.Model) -> None:
        """What `fit` needs once the model and optimizer are built."""

    def dataset(self, dataset_fn: DatasetFn, global_batch_size: int, *, skip_steps: int = 0):
        """What `fit` takes: every pipeline's batches, the first `skip_steps` steps skipped."""

    def checkpoint(self, model_dir: str, model: keras.Model, optimizer: keras.optimizers.Optimizer,
                   max_to_keep: int) -> RunState:
        """The run's checkpoints in `model_dir`, in this backend's format."""

    def fit_context(self, policy: str, jit_compile: bool) -> ContextManager:
        """The context `fit` runs in."""

    def fit_callbacks(self) -> list[keras.callbacks.Callback]:
        """Callbacks every `fit` on these devices needs (first in the list)."""

