"""Resumable training state: model + optimizer + step, in the two formats of `tfbert.artifacts.checkpoints`.

`TrainingCheckpoint` (the TensorFlow trainer's) writes TensorFlow's checkpoints with `tf.train.CheckpointManager`;
`KerasWeightsCheckpoint` (the JAX trainer's) writes Keras weights files, which any backend reads. Each restores
the newest checkpoint of the folder, so a run can move between the backends.

Why not `keras.callbacks.BackupAndRestore`: it keeps a single backup that is
overwritten in place and is deleted when training ends, while we want the
last few checkpoints kept (for the encoder export and for warm starts). Why
not `ModelCheckpoint`: it saves weights or `.keras` files, not the optimizer
slots under a distribution strategy in a form we can restore into a model
built inside `strategy.scope()`.

SIGKILL safety comes from TF's checkpoint protocol: `Checkpoint.write` writes
the shards under a temporary name and merges/renames them, and only then
does `CheckpointManager` rewrite the small `checkpoint` index file, itself
atomically (write to a temporary file + rename). A run killed mid-save leaves
at worst unreferenced files; `latest_checkpoint` always names a complete one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Iterator

import keras
import tensorflow as tf

from tfbert.artifacts.checkpoints import keras_checkpoint_name, keras_checkpoints, newest_checkpoint
from tfbert.interrupts import deferred
from tfbert.outputs import is_remote, temporary_name


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """True on the worker that owns `model_dir` (always true on a single machine)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    task_type = getattr(resolver, "task_type", None)
    if resolver is None or task_type is None:
        return True
    if task_type == "chief":
        return True
    has_chief = "chief" in resolver.cluster_spec().as_dict()
    return task_type == "worker" and resolver.task_id == 0 and not has_chief


def worker_index(strategy: tf.distribute.Strategy) -> int:
    resolver = getattr(strategy, "cluster_resolver", None)
    return int(getattr(resolver, "task_id", 0) or 0)


@contextlib.contextmanager
def chief_or_scratch(chief: bool, target: str) -> Iterator[str]:
    """`target` on the chief; on every other process a scratch folder, deleted afterwards.

    Saving under a distribution (JAX across hosts, `tf.distribute` across workers) runs collectives that every
    process must join, so all of them save; only the chief's copy is kept.

    Example:
        >>> with chief_or_scratch(False, "runs/a/encoder") as folder:
        ...     folder != "runs/a/encoder" and os.path.isdir(folder)
        True
    """
    if chief:
        yield target
        return
    scratch = tempfile.mkdtemp(prefix="tfbert-scratch-")
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class TrainingCheckpoint:
    """Save and restore model, optimizer and global step under `directory`.

    Every worker of a multi-worker run must call `save` (reading mirrored and
    sync-on-read variables may need collectives); only the chief writes into
    `directory`, the others write to a scratch directory that is removed.

    Example:
        >>> import keras, tempfile
        >>> model = keras.Sequential([keras.layers.Dense(1)]); model.build((None, 2))
        >>> optimizer = keras.optimizers.AdamW(); optimizer.build(model.trainable_variables)
        >>> state = TrainingCheckpoint(tempfile.mkdtemp(), model, optimizer)
        >>> state.save(10).endswith("ckpt-10"), state.restore()
        (True, 10)
    """

    def __init__(
        self,
        directory: str,
        model: keras.Model,
        optimizer: keras.optimizers.Optimizer,
        *,
        max_to_keep: int = 3,
        strategy: tf.distribute.Strategy | None = None,
    ):
        strategy = strategy or tf.distribute.get_strategy()
        self.directory = directory
        self.chief = is_chief(strategy)
        self.write_directory = (
            directory
            if self.chief
            else os.path.join(directory, ".scratch", f"worker-{worker_index(strategy)}")
        )
        with strategy.scope():
            self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
        self.model = model
        self.checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=self.step)
        self.manager = tf.train.CheckpointManager(
            self.checkpoint, self.write_directory, max_to_keep=max_to_keep, checkpoint_name="ckpt"
        )

    @property
    def latest(self) -> str | None:
        """Path of the newest complete checkpoint in `directory` (either format), if any."""
        newest = newest_checkpoint(self.directory)
        return None if newest is None else newest.path

    def restore(self) -> int:
        """Load the newest checkpoint (if any; a JAX run's Keras weights file too) and return its global step
        (0 if none)."""
        newest = newest_checkpoint(self.directory)
        if newest is None:
            return 0
        if newest.format == "keras":
            self.model.load_weights(newest.path)   # model and optimizer variables
            self.step.assign(newest.step)
            return newest.step
        self.checkpoint.restore(newest.path).assert_existing_objects_matched()
        return int(self.step.numpy())

    def save(self, step: int) -> str:
        """Write a checkpoint for `step`; return its path prefix (in the scratch dir on non-chief workers)."""
        self.step.assign(step)
        path = self.manager.save(checkpoint_number=step)
        if not self.chief:
            shutil.rmtree(self.write_directory, ignore_errors=True)
        return path


class CheckpointEveryEpoch(keras.callbacks.Callback):
    """Save a `TrainingCheckpoint` at the end of every `fit` epoch.

    The driver sets `steps_per_epoch` to the checkpoint interval, so one
    epoch ends exactly where a checkpoint is due; the global step is
    `(epoch + 1) * steps_per_epoch` plus the offset of the `fit` call.

    Example:
        >>> import keras, numpy as np
        >>> model = keras.Sequential([keras.layers.Dense(1)])
        >>> model.compile(optimizer="adamw", loss="mse")
        >>> model.build((None, 2)); model.optimizer.build(model.trainable_variables)
        >>> state = TrainingCheckpoint("runs/a", model, model.optimizer)
        >>> callback = CheckpointEveryEpoch(state, steps_per_epoch=2)
        >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), batch_size=2, epochs=2, callbacks=[callback], verbose=0)
        >>> state.restore()          # the global step of the newest checkpoint
        4
    """

    def __init__(self, state: TrainingCheckpoint, steps_per_epoch: int, first_step: int = 0):
        super().__init__()
        self.state = state
        self.steps_per_epoch = steps_per_epoch
        self.first_step = first_step
        self._first_epoch = None

    def on_train_begin(self, logs=None):
        self._first_epoch = None

    def on_epoch_begin(self, epoch, logs=None):
        if self._first_epoch is None:
            self._first_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        done_epochs = epoch - self._first_epoch + 1
        with deferred():   # Ctrl-C or SIGTERM during the write: after it, so the checkpoint is whole
            self.state.save(self.first_step + done_epochs * self.steps_per_epoch)


class KerasWeightsCheckpoint:
    """Save and restore model and optimizer as Keras weights files, `directory/ckpt-STEP.weights.h5` (any backend).

    The JAX trainer's checkpoints. Each file is written under a temporary name and renamed, so a kill leaves
    no half-written checkpoint under a final name; the `max_to_keep` newest are kept. Only the `chief`
    process writes into `directory`; the other processes of a multi-host run save too, into a scratch folder
    (`chief_or_scratch`).

    Example:
        >>> import keras, tempfile
        >>> model = keras.Sequential([keras.layers.Dense(1)]); model.build((None, 2))
        >>> model.compile(optimizer="adamw"); model.optimizer.build(model.trainable_variables)
        >>> state = KerasWeightsCheckpoint(tempfile.mkdtemp(), model)
        >>> state.save(10).endswith("ckpt-10.weights.h5"), state.restore()
        (True, 10)
    """

    def __init__(self, directory: str, model: keras.Model, *, max_to_keep: int = 3, chief: bool = True):
        self.directory, self.model, self.max_to_keep, self.chief = directory.rstrip("/"), model, max_to_keep, chief

    @property
    def latest(self) -> str | None:
        """Path of the newest complete checkpoint in `directory` (either format), if any."""
        newest = newest_checkpoint(self.directory)
        return None if newest is None else newest.path

    def restore(self) -> int:
        """Load the newest Keras checkpoint (if any) into the model and its optimizer; return its step (0 if none).

        A newer TensorFlow checkpoint is refused: only TensorFlow reads it."""
        newest = newest_checkpoint(self.directory)
        if newest is None:
            return 0
        if newest.format != "keras":
            raise ValueError(f"{self.directory} was last trained by the TensorFlow backend ({newest.path}), whose "
                             "checkpoints only TensorFlow reads: resume it with --backend tensorflow, or start a new "
                             f"run with --init-from {self.directory}, which takes its encoder")
        self.model.load_weights(newest.path)
        return newest.step

    def save(self, step: int) -> str:
        """Write the checkpoint of `step` (chief only) and drop the oldest beyond `max_to_keep`; return its path."""
        path = f"{self.directory}/{keras_checkpoint_name(step)}"
        if not self.chief:
            with chief_or_scratch(False, self.directory) as scratch:
                self.model.save_weights(os.path.join(scratch, keras_checkpoint_name(step)))
            return path
        if is_remote(path):
            self.model.save_weights(path)   # a bucket's object appears whole when its upload completes
        else:
            os.makedirs(self.directory, exist_ok=True)
            partial = temporary_name(path)
            self.model.save_weights(partial)
            os.replace(partial, path)
        for old in keras_checkpoints(self.directory)[:-self.max_to_keep]:
            tf.io.gfile.remove(old.path)
        return path
