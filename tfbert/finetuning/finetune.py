"""`finetune`: train a task model on a pretrained encoder with `model.fit`, keeping the best epoch.

Each epoch ends with the task's evaluator on the evaluation set; the model is
saved to `model_dir/best.keras` whenever the monitored metric improves, and
the returned model carries the best epoch's weights.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Callable, Mapping

import keras
import numpy as np
import tensorflow as tf

from tfbert.artifacts import Artifact
from tfbert.artifacts.layout import BEST_MODEL_FILE
from tfbert.distribute.precision import apply_precision
from tfbert.finetuning.evaluation import Evaluator
from tfbert.finetuning.pretrained import load_pretrained_encoder, opened, pretrained_hidden_size
from tfbert.models.encoder import Encoder
from tfbert.training.backends import training_devices
from tfbert.training.non_finite import StopOnNonFinite
from tfbert.training.optimization import create_optimizer
from tfbert.training.progress import TrainingClock
from tfbert.training.settings import TrainingSettings, training_settings

logger = logging.getLogger(__name__)

Labels = np.ndarray | Mapping[str, np.ndarray] | None


@dataclasses.dataclass
class FinetuneResult:
    """The fine-tuned model (best epoch's weights), its scores and where they were saved."""

    model: keras.Model
    best_epoch: int
    best_scores: dict[str, float]
    history: list[dict[str, float]]
    best_path: str


class KeepBest(keras.callbacks.Callback):
    """Runs `evaluate(model)` after every epoch, logs `val_<metric>`, saves the model when `monitor` improves."""

    def __init__(self, evaluate: Evaluator, monitor: str, path: str, mode: str = "max"):
        super().__init__()
        if mode not in ("max", "min"):
            raise ValueError(f"mode must be 'max' or 'min', got {mode!r}")
        self.evaluate, self.monitor, self.path, self.mode = evaluate, monitor, path, mode
        self.best_epoch, self.best_scores, self.history = -1, {}, []

    def _better(self, value: float) -> bool:
        if self.best_epoch < 0:
            return True
        best = self.best_scores[self.monitor]
        return value > best if self.mode == "max" else value < best

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        scores = {name: float(value) for name, value in self.evaluate(self.model).items()}
        if self.monitor not in scores:
            raise KeyError(f"the evaluator returned {sorted(scores)}, not the monitored metric {self.monitor!r}")
        self.history.append(scores)
        if logs is not None:
            logs.update({f"val_{name}": value for name, value in scores.items()})
        logger.info("epoch %d: %s", epoch + 1, ", ".join(f"{k}={v:.4f}" for k, v in scores.items()))
        if self._better(scores[self.monitor]):
            self.best_epoch, self.best_scores = epoch, scores
            self.model.save(self.path)
            Path(self.path).with_suffix(".json").write_text(
                json.dumps({"epoch": epoch + 1, "scores": scores}, indent=2), encoding="utf-8")


def load_keras_file_weights(model: keras.Model, path: str | Path) -> None:
    """`model.load_weights(path)` of a `.keras` file, from a copy of its weights taken out of the archive.

    Keras reads a `.keras` file's weights through the zip member itself, and the zip reader of Python
    3.11 seeks backwards by reading the member again from its start: restoring MiniLM's 90 MB took
    2.6 CPU-s, against 0.4 from the copy (`keras.saving.load_model` copies them out the same way).
    The copy lives in a temporary folder beside `path` and goes with it.
    """
    with zipfile.ZipFile(path) as archive, tempfile.TemporaryDirectory(dir=Path(path).parent) as folder:
        model.load_weights(archive.extract("model.weights.h5", folder))


def check_ids_fit(features: Mapping[str, np.ndarray], rows: int) -> None:
    """`ValueError` when the tokenizer gave ids past the encoder's token table of `rows` rows (a tokenizer with
    more tokens than the model), before any step runs.

    Example:
        >>> check_ids_fit({"token_ids": np.array([[2, 13, 3]])}, 13)
        Traceback (most recent call last):
        ValueError: the tokenizer gave token id 13 but the model's token table has 13 rows: it has more tokens ...
    """
    largest = max((int(np.max(values)) for name, values in features.items()
                   if name.endswith("token_ids") and np.size(values)), default=-1)
    if largest >= rows:
        raise ValueError(f"the tokenizer gave token id {largest} but the model's token table has {rows} rows: it has "
                         "more tokens than the model; give the tokenizer the model was trained with (or one that "
                         "extends it: tfbert vocab add)")


def check_length_fits(pieces: int, positions: int) -> None:
    """`ValueError` when sequences of `pieces` pieces are longer than the encoder's `positions`, before any step runs.

    Example:
        >>> check_length_fits(600, 512)
        Traceback (most recent call last):
        ValueError: sequences of 600 pieces (--max-length) are longer ...
    """
    if pieces > positions:
        raise ValueError(f"sequences of {pieces} pieces (--max-length) are longer than the model's {positions} "
                         f"positions; give --max-length {positions} or less")


def _dataset(features: Mapping[str, np.ndarray], labels: Labels, batch_size: int, seed: int | None,
             drop_remainder: bool) -> tf.data.Dataset:
    elements = dict(features) if labels is None else (dict(features), labels)
    count = len(next(iter(features.values())))
    return (tf.data.Dataset.from_tensor_slices(elements)
            .shuffle(count, seed=seed, reshuffle_each_iteration=True)
            .batch(batch_size, drop_remainder=drop_remainder)
            .prefetch(tf.data.AUTOTUNE))


def finetune(
    model_fn: Callable[[Encoder], keras.Model],
    pretrained: "str | Path | Encoder | Artifact",
    train_features: Mapping[str, np.ndarray],
    train_labels: Labels,
    evaluate: Evaluator,
    *,
    monitor: str,
    model_dir: str | Path,
    mode: str = "max",
    settings: TrainingSettings | None = None,
    weight_decay: float | None = None,
    epsilon: float | None = None,
    callbacks: list[keras.callbacks.Callback] | None = None,
    **setting_changes: Any,
) -> FinetuneResult:
    """Fine-tune `model_fn(encoder)` on the training arrays; evaluate and keep the best epoch.

    Args:
        model_fn: builds the task model on the pretrained encoder, e.g.
            `lambda encoder: SequenceClassifier(encoder, num_classes=2)`;
            called inside the devices' scope (`strategy.scope()`, or the JAX backend's `keras.distribution`).
        pretrained: an `Encoder`, an opened `tfbert.artifacts.Artifact`, or a path `tfbert.artifacts.open`
            reads (a `.keras` file, a pretraining run, a Hugging Face folder, ...; `load_pretrained_encoder`).
        train_features, train_labels: NumPy inputs and labels of the task model
            (labels may be None for label-free objectives such as contrastive).
        evaluate: an evaluator from `tfbert.finetuning.evaluation` on the dev set.
        monitor, mode: the evaluator's metric that picks the best epoch, and
            whether higher (`"max"`) or lower is better.
        model_dir: `best.keras` and `best.json` (epoch and scores) go here.
        settings: a `tfbert.training.settings.TrainingSettings` (its fields also as keyword
            arguments, which override it): `epochs`, `batch_size`, `backend`, `strategy` (TensorFlow),
            `mesh` (JAX), `seed`,
            `learning_rate` and `warmup_steps` or `warmup_fraction` (default: the `"finetune"` recipe, AdamW 2e-5
            with 10% warm-up and linear decay), `jit_compile` (XLA for the training step, worth
            it on accelerators; None or `"auto"` is off on TensorFlow: on CPUs compiling costs more than
            short runs gain; on JAX it is on unless False, the JAX step being an XLA program), `precision`
            (`"auto"`: bfloat16 where the hardware runs it faster for the
            pretrained encoder's width, see `tfbert.distribute.pick_precision`, set globally before the
            model is built) and `verbose` (None: 0).
        weight_decay, epsilon: override the recipe's decay 0.01 and epsilon 1e-6 (BERT's;
            PyTorch's AdamW uses 1e-8, which matters where gradients are tiny, as in distillation).

    Example:
        >>> result = finetune(lambda encoder: SequenceClassifier(encoder, 2), "all-MiniLM-L6-v2/",   # minutes  # doctest: +SKIP
        ...                   train_x, train_y, classification_evaluator(dev_x, dev_y),  # doctest: +SKIP
        ...                   monitor="accuracy", model_dir="runs/sst2", settings=TrainingSettings(epochs=3))  # doctest: +SKIP
        >>> result.best_scores  # doctest: +SKIP
        {'accuracy': 0.91, 'f1': 0.91, 'matthews_correlation': 0.82}
    """
    run = training_settings(settings, setting_changes)
    if isinstance(pretrained, (str, Path)) and "://" not in str(pretrained):
        pretrained = opened(pretrained)   # once: the precision choice and the encoder both read it
    epochs, batch_size, seed = run.epochs, run.batch_size, run.seed
    warmup_fraction = 0.1 if run.warmup_fraction is None else run.warmup_fraction
    if seed is not None:
        keras.utils.set_random_seed(seed)
    devices = training_devices(run)
    jit_compile = devices.finetune_jit_compile(run.jit_compile)
    os.makedirs(model_dir, exist_ok=True)
    examples = len(next(iter(train_features.values())))
    multi_replica = devices.replicas > 1
    steps_per_epoch = examples // batch_size if multi_replica else math.ceil(examples / batch_size)
    if steps_per_epoch == 0:
        raise ValueError(f"{examples} training examples do not fill one batch of {batch_size}")
    total_steps = epochs * steps_per_epoch
    warmup_steps = run.warmup_steps if run.warmup_steps is not None else int(warmup_fraction * total_steps)
    # A narrow encoder keeps float32 on a CPU (`cpu_precision`), as `tfbert pretrain` does.
    policy = devices.precision(run.precision, hidden_size=pretrained_hidden_size(pretrained))
    apply_precision(policy)
    with devices.scope():
        encoder = load_pretrained_encoder(pretrained)
        width = max((values.shape[-1] for name, values in train_features.items() if name.endswith("token_ids")),
                    default=0)
        check_length_fits(width, encoder.config.max_sequence_length)
        check_ids_fit(train_features, encoder.config.vocab_size)
        model = model_fn(encoder)
        optimizer = create_optimizer("finetune", total_steps, learning_rate=run.learning_rate,
                                     warmup_steps=warmup_steps, weight_decay=weight_decay,
                                     epsilon=epsilon)
        model.compile(optimizer=optimizer, jit_compile=jit_compile)
    keep_best = KeepBest(evaluate, monitor, str(Path(model_dir) / BEST_MODEL_FILE), mode)
    clock = TrainingClock()
    with devices.fit_context(policy, jit_compile):
        model.fit(
            _dataset(train_features, train_labels, batch_size, seed, drop_remainder=multi_replica),
            epochs=epochs,
            # A non-finite loss or weight stops training before KeepBest saves that epoch.
            callbacks=[*devices.fit_callbacks(),
                       StopOnNonFinite(lambda: keep_best.path if keep_best.best_epoch >= 0 else None),
                       clock, keep_best, *(callbacks or [])],
            verbose=run.verbose or 0,
            shuffle=False,  # the dataset shuffles itself
        )
    print(clock.summary())
    load_keras_file_weights(model, keep_best.path)
    return FinetuneResult(model, keep_best.best_epoch + 1, keep_best.best_scores, keep_best.history, keep_best.path)
