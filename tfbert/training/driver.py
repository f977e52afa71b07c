"""`train`: pretrain a model with `model.fit` on any strategy, resumably.

The run is cut into `fit` epochs of `checkpoint_every` steps; a checkpoint
(model + optimizer + global step) is written at the end of each, and a rerun
of the same call restores the newest one, skips the batches already seen and
trains up to `steps` again, never past it.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable

import keras
import tensorflow as tf

from tfbert.distribute.cpu_bfloat16 import elementwise_clustering, runs_bfloat16_on_cpu
from tfbert.distribute.data import DatasetFn, distribute_dataset, per_replica_batch_size
from tfbert.distribute.precision import apply_precision, choose_precision
from tfbert.distribute.replicas import use_global_batch_losses
from tfbert.distribute.strategy import (
    describe_strategy,
    replicas_are_cpu_devices,
    resolve_strategy,
    strategy_kind,
)
from tfbert.interrupts import deferred
from tfbert.training.checkpointing import CheckpointEveryEpoch, TrainingCheckpoint
from tfbert.training.non_finite import StopOnNonFinite
from tfbert.training.optimization import create_optimizer
from tfbert.training.progress import StepLogger, TrainingClock, stdout_is_terminal
from tfbert.training.settings import CPU_XLA_MIN_STEPS, TrainingSettings, training_settings

logger = logging.getLogger(__name__)

OptimizerFn = Callable[[int], keras.optimizers.Optimizer]


def resolve_jit_compile(strategy: tf.distribute.Strategy, jit_compile: bool | str = "auto",
                        policy: str = "float32", steps: int | None = None) -> bool:
    """`"auto"`: XLA everywhere except mirrored replicas on CPU devices, bfloat16 on CPUs, and runs of
    fewer than `CPU_XLA_MIN_STEPS` steps on CPUs (`steps`, where given), where the compile costs more
    than the run gains.

    bfloat16 on a CPU trains in graph mode with XLA clustering only the
    elementwise ops: XLA's CPU backend has no bfloat16 matmul kernel, oneDNN's
    does (`tfbert.distribute.cpu_bfloat16`).

    XLA with `MirroredStrategy` over logical CPU devices fails at the first
    step (TF 2.21, Keras 3.15): "Trying to access resource
    embeddings/replica_1/26 ... located in device
    /job:localhost/replica:0/task:0/device:CPU:1 from device
    /job:localhost/replica:0/task:0/device:CPU:0" (XLA known issue
    "tf.Variable on a different device"): the compiled CPU cluster is placed
    on CPU:0 and cannot read replica 1's variables. Only that case falls back
    to graph mode; TPU, GPU and the single-device CPU path compile. Asking
    for XLA (True) there is refused with that reason instead of failing at
    the first step.

    Example:
        >>> resolve_jit_compile(tf.distribute.get_strategy())
        True
        >>> resolve_jit_compile(tf.distribute.get_strategy(), steps=2)   # on a CPU
        False
    """
    multi_replica = strategy.num_replicas_in_sync > 1 or strategy_kind(strategy) == "multiworker"
    cpu_replicas = multi_replica and replicas_are_cpu_devices(strategy)
    if jit_compile != "auto":
        if jit_compile and cpu_replicas:
            raise ValueError("jit_compile on (XLA) fails with replicas on several CPU devices: XLA places the step "
                             "on the first device, which cannot read the other replicas' variables; use auto or off")
        return bool(jit_compile)
    short_cpu_run = steps is not None and steps < CPU_XLA_MIN_STEPS and replicas_are_cpu_devices(strategy)
    return not cpu_replicas and not runs_bfloat16_on_cpu(policy, strategy) and not short_cpu_run


def resolve_steps_per_execution(strategy: tf.distribute.Strategy, steps_per_execution: int) -> int:
    """`steps_per_execution`, or 1 under (multi-worker) mirrored strategies.

    Keras 3.15's multi-step loop (`tf.while_loop` over
    `iterator.get_next_as_optional()`) fails under `MirroredStrategy` with
    "You must feed a value for placeholder tensor 'while/body/.../Placeholder'
    with dtype int32" for any `steps_per_execution > 1`; it works on a single
    device (and is the main TPU speed-up, where it is kept).
    """
    if steps_per_execution > 1 and strategy_kind(strategy) in ("mirrored", "multiworker"):
        logger.warning(
            "steps_per_execution=%d is not supported by Keras 3 under %s; using 1.",
            steps_per_execution,
            type(strategy).__name__,
        )
        return 1
    return steps_per_execution


def build_for_restore(
    model: keras.Model, optimizer: keras.optimizers.Optimizer, element_spec
) -> None:
    """Create every model and optimizer variable before a checkpoint is restored into them."""
    sample = tf.nest.map_structure(lambda spec: tf.zeros(spec.shape, spec.dtype), element_spec)
    inputs, _, _ = keras.utils.unpack_x_y_sample_weight(sample)
    model(inputs, training=False)
    optimizer.build(model.trainable_variables)


def skip_keras_symbolic_build(model: keras.Model) -> None:
    """Stop `fit` from averaging the first input batch across replicas.

    Keras 3.15 `TensorFlowTrainer._maybe_symbolic_build` takes the first
    distributed batch and calls `strategy.reduce("MEAN", batch)` on it to
    build the model symbolically. Under `MirroredStrategy` a bool feature in
    the batch (e.g. a padding mask) then fails with "Value for attr 'T' of
    bool is not in the list of allowed values ... NodeDef: {{node AddN}}", and
    under `MultiWorkerMirroredStrategy` any dict batch fails ("Attempt to
    convert a value ({'token_ids': PerReplica...}) with an unsupported type
    (<class 'dict'>) to a Tensor"). The driver has already built the model and
    the optimizer (`build_for_restore`) and compiles no Keras loss or metric,
    so that build step has nothing left to do and is skipped for this model.
    """
    model._maybe_symbolic_build = lambda *args, **kwargs: None


def make_logs_reducible_across_workers(model: keras.Model, strategy: tf.distribute.Strategy) -> None:
    """Give each train-step log a leading axis under `MultiWorkerMirroredStrategy`.

    Keras 3.15 `reduce_per_replica` averages logs across workers with
    `strategy.reduce("MEAN", log, axis=0)`, which fails on the scalar logs of
    every train step ("Invalid reduction dimension 0 for input with 0
    dimensions"). A `[1]`-shaped log reduces over replicas and that axis to the
    same scalar.
    """
    if strategy_kind(strategy) != "multiworker":
        return
    train_step = model.train_step

    def train_step_with_reducible_logs(data):
        return {name: tf.reshape(value, [1]) for name, value in train_step(data).items()}

    model.train_step = train_step_with_reducible_logs


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
    **setting_changes: Any,
) -> keras.Model:
    """Train `model_fn()` on `dataset_fn` for `steps` steps in total, resuming from `model_dir`.

    Args:
        model_fn: builds the (uncompiled) model; called inside `strategy.scope()`.
            The model computes its own loss in `compute_loss` from the input
            dict and tracks its metrics; if it has `save_encoder(path)` it is
            called at the end with `model_dir/encoder`.
        dataset_fn: `dataset_fn(per_replica_batch_size, input_context)` returns
            the dataset of one input pipeline: dicts of features, batched with
            `drop_remainder=True`, sharded with `input_context`, and repeated
            (steps are counted by the driver, not by the end of the data).
        model_dir: checkpoints (`ckpt-<step>`), TensorBoard logs (`logs/`),
            and the exported `encoder/`.
        settings: a `TrainingSettings`; the driver reads `steps` (total training steps, required),
            `batch_size` (examples per step over all replicas), `strategy` (default `"auto"`),
            `steps_per_execution` (TPU: 100 or more; `steps` and `checkpoint_every` must be
            multiples of it), `checkpoint_every` (steps between checkpoints, one `fit` epoch),
            `jit_compile` (see `resolve_jit_compile`; None is `"auto"`), `precision` (see
            `pick_precision`, which logs its choice and why), `log_every`, `verbose` (`"auto"`:
            Keras' progress bar on a terminal, `StepLogger` lines otherwise) and `seed`.
        optimizer_recipe: a `tfbert.training.optimization` recipe name, used
            unless `optimizer_fn(total_updates)` is given.
        gradient_accumulation_steps: micro-batches per update (single-replica
            strategies only, see `create_optimizer`).
        max_checkpoints: checkpoints kept.
        callbacks: extra Keras callbacks for every `fit` call.
        hidden_size: the model's hidden size, where known: `precision="auto"` keeps float32 on a
            CPU for narrow models (`tfbert.distribute.precision.auto_precision`).
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
    steps, global_batch_size, checkpoint_every, seed = run.steps, run.batch_size, run.checkpoint_every, run.seed
    log_every, verbose = run.log_every, "auto" if run.verbose is None else run.verbose
    kind = run.strategy or "auto"
    strategy = resolve_strategy(kind) if isinstance(kind, str) else kind
    accumulation = gradient_accumulation_steps or 1
    _check_arguments(strategy, steps, checkpoint_every, accumulation, global_batch_size)
    steps_per_execution = resolve_steps_per_execution(strategy, run.steps_per_execution)
    if checkpoint_every % steps_per_execution or steps % steps_per_execution:
        # Keras runs whole executions: a 1-step epoch with steps_per_execution=3 trains 3 steps.
        raise ValueError(
            f"checkpoint_every={checkpoint_every} and steps={steps} must be multiples of "
            f"steps_per_execution={steps_per_execution}."
        )
    policy = choose_precision(strategy, run.precision, hidden_size=hidden_size)
    use_jit = resolve_jit_compile(strategy, "auto" if run.jit_compile is None else run.jit_compile, policy, steps)
    logger.info(
        "Training on %s, precision %s, jit_compile=%s, steps_per_execution=%d",
        describe_strategy(strategy),
        policy,
        use_jit,
        steps_per_execution,
    )
    if seed is not None:
        keras.utils.set_random_seed(seed)
    apply_precision(policy)

    with strategy.scope():
        model = model_fn()
        use_global_batch_losses(model)
        total_updates = steps // accumulation
        optimizer = (
            optimizer_fn(total_updates)
            if optimizer_fn is not None
            else create_optimizer(
                optimizer_recipe, total_updates, gradient_accumulation_steps=gradient_accumulation_steps
            )
        )
        model.compile(optimizer=optimizer, jit_compile=use_jit, steps_per_execution=steps_per_execution)
        first_dataset = dataset_fn(per_replica_batch_size(global_batch_size, strategy), tf.distribute.InputContext())
        build_for_restore(model, model.optimizer, first_dataset.element_spec)
        skip_keras_symbolic_build(model)
        make_logs_reducible_across_workers(model, strategy)
        state = TrainingCheckpoint(
            model_dir, model, model.optimizer, max_to_keep=max_checkpoints, strategy=strategy
        )
    first_step = state.restore()
    if first_step:
        logger.info("Resumed from %s at step %d of %d", state.latest, first_step, steps)

    clock = TrainingClock()
    one_host = strategy_kind(strategy) in ("default", "mirrored")
    pipelines = _reusing_first(dataset_fn, first_dataset if one_host else None)
    with elementwise_clustering(policy, strategy, use_jit):
        for start, epochs, steps_per_epoch in _fit_chunks(first_step, steps, checkpoint_every):
            dataset = distribute_dataset(strategy, pipelines, global_batch_size, skip_steps=start)
            model.fit(
                dataset,
                initial_epoch=start // steps_per_epoch,
                epochs=start // steps_per_epoch + epochs,
                steps_per_epoch=steps_per_epoch,
                callbacks=[
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


def _reusing_first(dataset_fn: DatasetFn, first_dataset: tf.data.Dataset | None) -> DatasetFn:
    """`dataset_fn`, whose first one-pipeline call returns `first_dataset` (already built, for its element spec).

    Building a pretraining pipeline traces its tokenizer, pairing and masking functions, which takes
    seconds (minutes on a loaded CPU); a one-host run builds it once. Other strategies build their
    pipelines on their own input hosts, so they get `first_dataset=None`.
    """
    unused = [first_dataset] if first_dataset is not None else []

    def pipeline(batch_size: int, input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        if unused and input_context.num_input_pipelines == 1:
            return unused.pop()
        return dataset_fn(batch_size, input_context)
    return pipeline


def _check_arguments(strategy, steps, checkpoint_every, accumulation, global_batch_size) -> None:
    if steps <= 0 or checkpoint_every <= 0:
        raise ValueError(f"steps ({steps}) and checkpoint_every ({checkpoint_every}) must be positive.")
    per_replica_batch_size(global_batch_size, strategy)
    if accumulation > 1 and strategy.num_replicas_in_sync > 1:
        raise ValueError(
            "gradient_accumulation_steps is not supported with several replicas: Keras 3's "
            "optimizer accumulation applies the update inside a `cond`, and under "
            "MirroredStrategy that fails with \"`merge_call` called while defining a new "
            "graph or a tf.function\". Raise global_batch_size instead."
        )
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
    # First: a non-finite loss or weight stops the run before the checkpoint callback saves it.
    callbacks = [StopOnNonFinite(lambda: state.latest, first_step=start),
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
    save_encoder = getattr(model, "save_encoder", None)
    if chief and callable(save_encoder):
        with deferred():   # a signal meanwhile: after the file is whole
            save_encoder(os.path.join(model_dir, "encoder"))
