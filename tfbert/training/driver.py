"""`train`: pretrain a model with `model.fit` on TensorFlow or JAX, on any devices, resumably.

The run is cut into `fit` epochs of `checkpoint_every` steps; a checkpoint
(model + optimizer + global step) is written at the end of each, and a rerun
of the same call restores the newest one, skips the batches already seen and
trains up to `steps` again, never past it. All of that, the progress lines, the
non-finite checks and TensorBoard are written here once; what differs between
`tf.distribute` and `keras.distribution` is the run's `TrainingDevices`
(`tfbert.training.backends`).
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any, Callable

import keras
import numpy as np
import tensorflow as tf

from tfbert.architectures import ArchitectureSpec
from tfbert.artifacts.manifest import record_precision
from tfbert.distribute.data import DatasetFn
from tfbert.distribute.precision import PrecisionChoice, apply_precision
from tfbert.interrupts import deferred
from tfbert.training.backends import TrainingDevices, training_devices
from tfbert.training.checkpointing import CheckpointEveryEpoch, chief_or_scratch
from tfbert.training.no_data import StopOnNoData
from tfbert.training.non_finite import StopOnNonFinite
from tfbert.training.optimization import create_optimizer
from tfbert.training.progress import StepLogger, TrainingClock, stdout_is_terminal
from tfbert.training.settings import TrainingSettings, training_settings

logger = logging.getLogger(__name__)

OptimizerFn = Callable[[int], keras.optimizers.Optimizer]


def build_for_restore(
    model: keras.Model, optimizer: keras.optimizers.Optimizer, element_spec
) -> None:
    """Create every model and optimizer variable before a checkpoint is restored into them."""
    sample = tf.nest.map_structure(lambda spec: np.zeros(spec.shape, spec.dtype.as_numpy_dtype), element_spec)
    inputs, _, _ = keras.utils.unpack_x_y_sample_weight(sample)
    model(inputs, training=False)
    optimizer.build(model.trainable_variables)


def train(
    model_fn: Callable[[], keras.Model],
    dataset_fn: DatasetFn,
    *,
    model_dir: str,
    settings: TrainingSettings | None = None,
    optimizer_recipe: str = "bert",
    optimizer_fn: OptimizerFn | None = None,
    gradient_accumulation_steps: int | None = None,
    max_checkpoints: int = 3,
    callbacks: list[keras.callbacks.Callback] | None = None,
    hidden_size: int | None = None,
    family: ArchitectureSpec | None = None,
    precision_choice: PrecisionChoice | None = None,
    **setting_changes: Any,
) -> keras.Model:
    """Train `model_fn()` on `dataset_fn` for `steps` steps in total, resuming from `model_dir`.

    Args:
        model_fn: builds the (uncompiled) model; called inside the devices' scope (`strategy.scope()` on
            TensorFlow, the `keras.distribution` on JAX). The model computes its own loss in `compute_loss`
            from the input dict and tracks its metrics; if it has `save_encoder(path)` it is called at the
            end with `model_dir/encoder`.
        dataset_fn: `dataset_fn(batch_size, input_context)` returns the dataset of one input pipeline: dicts
            of features, batched with `drop_remainder=True`, sharded with `input_context`, and repeated
            (steps are counted by the driver, not by the end of the data). On TensorFlow a pipeline feeds
            one replica; on JAX one process (host), whose batches Keras lays out over its devices.
        model_dir: checkpoints (`ckpt-<step>`: TensorFlow's on TensorFlow, `ckpt-<step>.weights.h5` on JAX;
            `tfbert.artifacts.checkpoints`), TensorBoard logs (`logs/`), and the exported `encoder/`.
        settings: a `TrainingSettings`; the driver reads `steps` (total training steps, required),
            `batch_size` (examples per step over all devices), `backend` (`auto`: the one Keras runs on),
            `strategy` (TensorFlow; default `"auto"`), `mesh` (JAX: `"DATAxMODEL"`, default data parallel),
            `steps_per_execution` (TPU: 100 or more; `steps` and `checkpoint_every` must be multiples of it),
            `checkpoint_every` (steps between checkpoints, one `fit` epoch), `jit_compile` (see
            `tensorflow_devices.resolve_jit_compile`; None is `"auto"`; JAX always compiles unless False),
            `precision` (see `pick_precision`, which logs its choice and why), `log_every`, `verbose`
            (`"auto"`: Keras' progress bar on a terminal, `StepLogger` lines otherwise) and `seed`.
        optimizer_recipe: a `tfbert.training.optimization` recipe name, used
            unless `optimizer_fn(total_updates)` is given.
        gradient_accumulation_steps: micro-batches per update (single-replica
            strategies only on TensorFlow, see `create_optimizer`).
        max_checkpoints: checkpoints kept.
        callbacks: extra Keras callbacks for every `fit` call.
        hidden_size: the model's hidden size, where known: `precision="auto"` keeps float32 on a
            CPU for narrow models (`tfbert.distribute.precision.cpu_precision`).
        family: the model's architecture, whose layout a JAX `mesh` shards the model by.
        precision_choice: the precision a resumed run keeps (`tfbert.training.run_precision.kept_precision`);
            None: the devices decide (`auto`) and a local `model_dir`'s manifest records it.
        setting_changes: `TrainingSettings` fields, overriding `settings` (`steps=10`).

    Returns:
        The trained model.

    Example:
        >>> model = train(
        ...     lambda: BertPretrainer(config), dataset_fn,
        ...     model_dir="gs://bucket/bert-base", settings=TrainingSettings(
        ...         steps=1_000_000, batch_size=256, strategy=resolve_strategy("tpu", tpu="local"),
        ...         steps_per_execution=500, checkpoint_every=10_000))  # doctest: +SKIP
    """
    run = training_settings(settings, setting_changes)
    if run.steps is None:
        raise ValueError("train needs the number of steps: TrainingSettings(steps=...) or steps=...")
    steps, global_batch_size, checkpoint_every = run.steps, run.batch_size, run.checkpoint_every
    log_every, verbose = run.log_every, "auto" if run.verbose is None else run.verbose
    devices = training_devices(run, family)
    accumulation = gradient_accumulation_steps or 1
    _check_arguments(devices, steps, checkpoint_every, accumulation, global_batch_size)
    steps_per_execution = devices.steps_per_execution(run.steps_per_execution)
    if checkpoint_every % steps_per_execution or steps % steps_per_execution:
        # Keras runs whole executions: a 1-step epoch with steps_per_execution=3 trains 3 steps.
        raise ValueError(
            f"checkpoint_every={checkpoint_every} and steps={steps} must be multiples of "
            f"steps_per_execution={steps_per_execution}."
        )
    if precision_choice is not None:
        policy = precision_choice.policy
    else:
        policy = devices.precision(run.precision, hidden_size=hidden_size)
        record_precision(model_dir, policy, f"--precision {run.precision} at the run's start on {devices.describe()}")
    use_jit = devices.jit_compile("auto" if run.jit_compile is None else run.jit_compile, policy, steps)
    logger.info("Training on %s, precision %s, jit_compile=%s, steps_per_execution=%d",
                devices.describe(), policy, use_jit, steps_per_execution)
    if run.seed is not None:
        keras.utils.set_random_seed(run.seed)
    apply_precision(policy)
    model, state, first_dataset = _build(devices, model_fn, dataset_fn, model_dir, run, optimizer_recipe,
                                         optimizer_fn, gradient_accumulation_steps, max_checkpoints,
                                         use_jit, steps_per_execution)
    first_step = state.restore()
    if first_step and state.chief:
        print(f"resumed from {state.latest} at step {first_step} of {steps}")

    clock = TrainingClock()
    pipelines = _reusing_first(dataset_fn, first_dataset if devices.one_host else None)
    with devices.fit_context(policy, use_jit), warnings.catch_warnings():
        # The pipelines repeat: only one with no example at all runs out, which StopOnNoData names in one line.
        warnings.filterwarnings("ignore", message="Your input ran out of data")
        for start, epochs, steps_per_epoch in _fit_chunks(first_step, steps, checkpoint_every):
            model.fit(
                devices.dataset(pipelines, global_batch_size, skip_steps=start),
                initial_epoch=start // steps_per_epoch,
                epochs=start // steps_per_epoch + epochs,
                steps_per_epoch=steps_per_epoch,
                callbacks=[
                    *devices.fit_callbacks(),
                    clock,
                    *_callbacks(state, model_dir, start, steps, steps_per_epoch, log_every, verbose),
                    *(callbacks or []),
                ],
                verbose=_keras_verbosity(verbose),
                shuffle=False,
            )
    _export_encoder(model, model_dir, state.chief)
    if clock.steps and state.chief:
        print(clock.summary())
    return model


def _build(devices: TrainingDevices, model_fn, dataset_fn, model_dir, run, optimizer_recipe, optimizer_fn,
           gradient_accumulation_steps, max_checkpoints, use_jit, steps_per_execution):
    """The compiled model with every variable built, its checkpoints, and the first pipeline (for its spec)."""
    with devices.scope():
        model = model_fn()
        devices.prepare(model)
        total_updates = run.steps // (gradient_accumulation_steps or 1)
        optimizer = (
            optimizer_fn(total_updates)
            if optimizer_fn is not None
            else create_optimizer(
                optimizer_recipe, total_updates, gradient_accumulation_steps=gradient_accumulation_steps
            )
        )
        model.compile(optimizer=optimizer, jit_compile=use_jit, steps_per_execution=steps_per_execution)
        first_dataset = dataset_fn(devices.pipeline_batch_size(run.batch_size), devices.input_context())
        build_for_restore(model, model.optimizer, first_dataset.element_spec)
        devices.after_build(model)
        state = devices.checkpoint(model_dir, model, model.optimizer, max_checkpoints)
    return model, state, first_dataset


def _reusing_first(dataset_fn: DatasetFn, first_dataset: tf.data.Dataset | None) -> DatasetFn:
    """`dataset_fn`, whose first one-pipeline call returns `first_dataset` (already built, for its element spec).

    Building a pretraining pipeline traces its tokenizer, pairing and masking functions, which takes
    seconds (minutes on a loaded CPU); a one-host run builds it once. Runs over several hosts build their
    pipelines on each input host, so they get `first_dataset=None`.
    """
    unused = [first_dataset] if first_dataset is not None else []

    def pipeline(batch_size: int, input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        if unused and input_context.num_input_pipelines == 1:
            return unused.pop()
        return dataset_fn(batch_size, input_context)
    return pipeline


def _check_arguments(devices: TrainingDevices, steps, checkpoint_every, accumulation, global_batch_size) -> None:
    if steps <= 0 or checkpoint_every <= 0:
        raise ValueError(f"steps ({steps}) and checkpoint_every ({checkpoint_every}) must be positive.")
    devices.check_batch(global_batch_size, accumulation)
    if accumulation > 1 and (steps % accumulation or checkpoint_every % accumulation):
        raise ValueError(
            f"steps ({steps}) and checkpoint_every ({checkpoint_every}) must be multiples "
            f"of gradient_accumulation_steps ({accumulation}) so that checkpoints fall on updates."
        )


def _fit_chunks(first_step: int, steps: int, checkpoint_every: int) -> list[tuple[int, int, int]]:
    """`(start_step, epochs, steps_per_epoch)` of the `fit` calls from `first_step` to `steps`.

    `fit` cannot change `steps_per_epoch` between epochs, so: one short epoch
    up to the next multiple of `checkpoint_every` (after a resume from an
    unaligned step), one call of whole intervals, one short epoch for the rest.

    Example:
        >>> _fit_chunks(0, 2500, 1000)
        [(0, 2, 1000), (2000, 1, 500)]
    """
    chunks = []
    step = first_step
    if step % checkpoint_every and step < steps:
        realigned = min(steps, (step // checkpoint_every + 1) * checkpoint_every)
        chunks.append((step, 1, realigned - step))
        step = realigned
    full_epochs = (steps - step) // checkpoint_every
    if full_epochs:
        chunks.append((step, full_epochs, checkpoint_every))
        step += full_epochs * checkpoint_every
    if step < steps:
        chunks.append((step, 1, steps - step))
    return chunks


def _callbacks(state, model_dir, start, steps, steps_per_epoch, log_every, verbose):
    # First: a non-finite loss or weight, or an epoch without a batch, stops the run before the checkpoint
    # callback saves it.
    callbacks = [StopOnNonFinite(lambda: state.latest, first_step=start), StopOnNoData(),
                 CheckpointEveryEpoch(state, steps_per_epoch, first_step=start)]
    if state.chief:
        callbacks.append(
            keras.callbacks.TensorBoard(os.path.join(model_dir, "logs"), update_freq=log_every)
        )
    if verbose == "auto" and not stdout_is_terminal():
        callbacks.append(StepLogger(total_steps=steps, every=log_every, first_step=start))
    return callbacks


def _keras_verbosity(verbose: str | int) -> int:
    if verbose == "auto":
        return 1 if stdout_is_terminal() else 0
    return int(verbose)


def _export_encoder(model: keras.Model, model_dir: str, chief: bool) -> None:
    """The chief writes `model_dir/encoder`; every other process saves into a scratch folder (`chief_or_scratch`)."""
    save_encoder = getattr(model, "save_encoder", None)
    if not callable(save_encoder):
        return
    with chief_or_scratch(chief, os.path.join(model_dir, "encoder")) as target, deferred():
        save_encoder(target)   # deferred: a signal meanwhile comes after the file is whole
