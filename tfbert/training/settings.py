"""`TrainingSettings`: how a run trains (length, batch, learning rate, seed, devices, precision, checkpoints),
one object shared by `pretrain`, `finetune` and `distill` and built from their command-line flags.

The training functions (`tfbert.training.driver.train`, `tfbert.training.pretraining.pretrain`,
`tfbert.finetuning.finetune.finetune`, `tfbert.finetuning.distillation.distill`) take `settings=` and also
each field as a keyword argument, which overrides the field: `finetune(..., epochs=2)` is
`finetune(..., settings=TrainingSettings(epochs=2))`. `global_batch_size=` is the older name of
`batch_size` and still works.

Example:
    >>> settings = TrainingSettings(steps=1000, batch_size=64, seed=1)
    >>> settings.with_changes(learning_rate=1e-4, global_batch_size=128).batch_size
    128
    >>> settings.with_changes(epoch=2)
    Traceback (most recent call last):
    ...
    TypeError: unknown training setting 'epoch'; the settings are steps, epochs, batch_size, learning_rate, warmup_steps, warmup_fraction, seed, backend, strategy, mesh, precision, jit_compile, checkpoint_every, steps_per_execution, log_every, verbose
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

# On a CPU, `"auto"` compiles runs of at least this many steps. Compiling a training step takes seconds
# there, which XLA's faster steps win back only over tens of steps: fp32, batch 8 x 128, XLA costs 2.6 s
# more over 2 steps and saves 0.12 s a step for bert_small (even at ~22 steps), 2.7 s and 0.02 s for
# bert_tiny (even at ~120); benchmarks/short_runs.py, results/short-runs.md.
CPU_XLA_MIN_STEPS = 50

BACKENDS = ("auto", "tensorflow", "jax")

# Older keyword names of fields, still accepted.
ALIASES = {"global_batch_size": "batch_size"}


@dataclasses.dataclass(frozen=True)
class TrainingSettings:
    """How a run trains; every field has the default the commands use.

    Attributes:
        steps: total training steps (batches) of a pretraining run.
        epochs: passes over the training set when fine-tuning or distilling.
        batch_size: examples per step over all replicas (the global batch).
        learning_rate: peak learning rate; None keeps the recipe's (or the config's).
        warmup_steps: steps of linear warm-up; None uses `warmup_fraction`, else the recipe's.
        warmup_fraction: warm-up as a fraction of all steps; None: the recipe's (fine-tuning: 0.1).
        seed: seeds Python, NumPy and TensorFlow; None leaves them unseeded.
        backend: the trainer: `tensorflow` (`tf.distribute`), `jax` (Keras' JAX trainer under
            `keras.distribution`) or `auto` (`tfbert.accelerators.resolve_backend`: `KERAS_BACKEND` where set, JAX
            where only JAX sees the accelerator, else TensorFlow).
        strategy: a `tf.distribute.Strategy` or a `tfbert.distribute.resolve_strategy` kind (TensorFlow backend).
        mesh: the JAX backend's device mesh, `"DATAxMODEL"` (`"2x4"`: 2-way data, 4-way model parallel with the
            family's layout); None: data parallel over every device.
        precision: `auto` (see `tfbert.distribute.pick_precision`), `fp32`, `bf16` or a Keras policy name.
        jit_compile: XLA for the training step: True, False or `auto`; None: the loop's own
            default (`auto` when pretraining, which on a CPU compiles runs of `CPU_XLA_MIN_STEPS`
            steps or more; False when fine-tuning, where compiling costs more than short runs gain
            on CPUs).
        checkpoint_every: pretraining steps between checkpoints.
        steps_per_execution: steps per compiled call (TPU: 100 or more).
        log_every: pretraining steps between progress lines.
        verbose: Keras' verbosity (0, 1, 2, or `auto`); None: the loop's own default (`auto`
            when pretraining, 0 when fine-tuning).
    """

    steps: int | None = None
    epochs: int = 3
    batch_size: int = 32
    learning_rate: float | None = None
    warmup_steps: int | None = None
    warmup_fraction: float | None = None
    seed: int | None = None
    backend: str = "auto"
    strategy: Any = "auto"
    mesh: str | None = None
    precision: str = "auto"
    jit_compile: bool | str | None = None
    checkpoint_every: int = 1000
    steps_per_execution: int = 1
    log_every: int = 100
    verbose: str | int | None = None

    def __post_init__(self) -> None:
        if self.jit_compile not in (None, True, False, "auto"):
            raise ValueError(f"jit_compile={self.jit_compile!r}: give True, False or 'auto' (None: the training "
                             "loop's own default)")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend={self.backend!r}: give one of {', '.join(BACKENDS)}")

    def with_changes(self, **changes: Any) -> TrainingSettings:
        """A copy with `changes` (field names, or their `ALIASES`) applied."""
        changes = {ALIASES.get(name, name): value for name, value in changes.items()}
        names = [field.name for field in dataclasses.fields(self)]
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise TypeError(f"unknown training setting {unknown[0]!r}; the settings are {', '.join(names)}")
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_flags(cls, args: argparse.Namespace) -> TrainingSettings:
        """The settings a command's parsed flags give: each field's flag where the command has it
        (`--batch-size`, `--steps`, `--epochs`, `--learning-rate`, ...) and it was given.

        Example:
            >>> TrainingSettings.from_flags(argparse.Namespace(steps=20, batch_size=8, seed=None, data="x"))
            TrainingSettings(steps=20, epochs=3, batch_size=8, learning_rate=None, warmup_steps=None, warmup_fraction=None, seed=None, backend='auto', strategy='auto', mesh=None, precision='auto', jit_compile=None, checkpoint_every=1000, steps_per_execution=1, log_every=100, verbose=None)
        """
        given = {field.name: getattr(args, field.name) for field in dataclasses.fields(cls)
                 if getattr(args, field.name, None) is not None}
        return cls(**given)


def training_settings(settings: TrainingSettings | None, changes: dict[str, Any]) -> TrainingSettings:
    """`settings` (default: `TrainingSettings()`) with the keyword arguments a training function got.

    Example:
        >>> training_settings(None, {"epochs": 1}).epochs
        1
    """
    return (settings or TrainingSettings()).with_changes(**changes)
