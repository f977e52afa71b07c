"""A run folder's checkpoints, in either of the two formats tfbert's trainers write.

- `tensorflow`: TensorFlow's object checkpoints (`ckpt-STEP.index` + `ckpt-STEP.data-*`, listed by the
  `checkpoint` index file), written by the TensorFlow trainer through `tf.train.CheckpointManager`.
- `keras`: Keras' own weights files (`ckpt-STEP.weights.h5`: the model's and the optimizer's variables),
  written by the JAX trainer. Keras reads them on any backend, so a run trained on JAX is read by a
  TensorFlow process (`tfbert export`, `finetune --init-from`, `convert to-huggingface`). Each file is
  written under a temporary name and renamed, so every `ckpt-STEP.weights.h5` is complete.

Readers take the newest checkpoint of either format, numbered by its global step.

Example:
    >>> newest_checkpoint("runs/bert")   # doctest: +SKIP
    Checkpoint(path='runs/bert/ckpt-20.weights.h5', step=20, format='keras')
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import keras
import tensorflow as tf

KERAS_SUFFIX = ".weights.h5"
KERAS_NAME = re.compile(r"^ckpt-(\d+)\.weights\.h5$")
FORMATS = ("tensorflow", "keras")


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """One complete checkpoint: `path` (TensorFlow's path prefix, or the Keras `.weights.h5` file), its
    global `step` and its `format` (`tensorflow` or `keras`)."""

    path: str
    step: int
    format: str


def keras_checkpoint_name(step: int) -> str:
    """`ckpt-STEP.weights.h5`, the Keras checkpoint of `step`."""
    return f"ckpt-{step}{KERAS_SUFFIX}"


def keras_checkpoints(directory: str | Path) -> list[Checkpoint]:
    """The complete Keras checkpoints in `directory`, oldest first (a local folder or a bucket)."""
    directory = str(directory).rstrip("/")
    if not tf.io.gfile.isdir(directory):
        return []
    found = []
    for name in tf.io.gfile.listdir(directory):
        match = KERAS_NAME.match(name.rstrip("/"))
        if match:
            found.append(Checkpoint(f"{directory}/{match.group(0)}", int(match.group(1)), "keras"))
    return sorted(found, key=lambda checkpoint: checkpoint.step)


def tensorflow_checkpoint(directory: str | Path) -> Checkpoint | None:
    """The newest complete TensorFlow checkpoint that `directory`'s `checkpoint` index names, if any."""
    try:
        prefix = tf.train.latest_checkpoint(str(directory))
    except (tf.errors.OpError, ValueError):
        return None
    if prefix is None:
        return None
    number = prefix.rsplit("-", 1)[-1]
    return Checkpoint(prefix, int(number) if number.isdigit() else 0, "tensorflow")


def newest_checkpoint(directory: str | Path) -> Checkpoint | None:
    """The newest complete checkpoint of either format in `directory` (the higher step), None where it has none."""
    candidates = [checkpoint for checkpoint in (tensorflow_checkpoint(directory), *keras_checkpoints(directory)[-1:])
                  if checkpoint is not None]
    return max(candidates, key=lambda checkpoint: checkpoint.step, default=None)


def restore_model_weights(model: keras.Model, checkpoint: Checkpoint) -> None:
    """Load `checkpoint`'s model weights into `model` (built, the same class and config as the run's); the
    optimizer's too where `model` has a built one and the checkpoint is in the Keras format.

    A TensorFlow checkpoint needs the TensorFlow backend (its variables are TensorFlow's); a Keras one
    loads on any backend.
    """
    if checkpoint.format == "keras":
        model.load_weights(checkpoint.path)
        return
    if keras.backend.backend() != "tensorflow":
        raise ValueError(f"{checkpoint.path} is a TensorFlow checkpoint, which only the TensorFlow backend reads; "
                         "run this with --backend tensorflow (or read the run's encoder/encoder.keras)")
    tf.train.Checkpoint(model=model).restore(checkpoint.path).expect_partial().assert_existing_objects_matched()
