"""`TensorFlowDevices`: training under a `tf.distribute.Strategy` (TPU, mirrored GPUs, several workers, a CPU).

Keras 3's TensorFlow trainer runs `fit` under the strategy the model was built in; what it needs besides (losses
over the global batch, logs that reduce across workers, the symbolic build skipped, graph-mode bfloat16 on CPUs)
is set here, and nowhere else.

Example:
    >>> devices = TensorFlowDevices(tf.distribute.get_strategy())
    >>> devices.replicas, devices.steps_per_execution(100)
    (1, 100)
"""

from __future__ import annotations

import logging
from typing import ContextManager

import keras
import tensorflow as tf

from tfbert.distribute.cpu_bfloat16 import elementwise_clustering, runs_bfloat16_on_cpu
from tfbert.distribute.data import DatasetFn, distribute_dataset, per_replica_batch_size
from tfbert.distribute.precision import choose_precision
from tfbert.distribute.replicas import use_global_batch_losses
from tfbert.distribute.strategy import describe_strategy, replicas_are_cpu_devices, resolve_strategy, strategy_kind
from tfbert.training.checkpointing import TrainingCheckpoint
from tfbert.training.settings import CPU_XLA_MIN_STEPS, TrainingSettings

logger = logging.getLogger(__name__)


class TensorFlowDevices:
    """The devices of `strategy`, as the shared driver asks for them (`tfbert.training.backends.TrainingDevices`)."""

    name = "tensorflow"

    def __init__(self, strategy: tf.distribute.Strategy):
        self.strategy = strategy
        self.replicas = strategy.num_replicas_in_sync
        self.one_host = strategy_kind(strategy) in ("default", "mirrored")
        self.processes = 1 if self.one_host else max(describe_strategy(strategy)["workers"], 1)

    @classmethod
    def from_settings(cls, settings: TrainingSettings) -> TensorFlowDevices:
        """`settings.strategy` (a strategy, or a `resolve_strategy` kind); `mesh` is refused (JAX's)."""
        if settings.mesh is not None:
            raise ValueError(f"mesh={settings.mesh!r} is the JAX backend's device mesh; with backend='tensorflow' "
                             "the devices come from strategy (tpu, gpu, cpu, multiworker): use backend='jax' for a "
                             "mesh")
        kind = settings.strategy or "auto"
        return cls(resolve_strategy(kind) if isinstance(kind, str) else kind)

    def describe(self) -> str:
        return f"TensorFlow, {describe_strategy(self.strategy)}"

    def scope(self) -> ContextManager:
        return self.strategy.scope()

    def check_batch(self, global_batch_size: int, accumulation: int) -> None:
        per_replica_batch_size(global_batch_size, self.strategy)
        if accumulation > 1 and self.replicas > 1:
            raise ValueError(
                "gradient_accumulation_steps is not supported with several replicas: Keras 3's "
                "optimizer accumulation applies the update inside a `cond`, and under "
                "MirroredStrategy that fails with \"`merge_call` called while defining a new "
                "graph or a tf.function\". Raise global_batch_size instead."
            )

    def precision(self, requested: str, hidden_size: int | None = None) -> str:
        return choose_precision(self.strategy, requested, hidden_size=hidden_size)

    def jit_compile(self, requested: bool | str, policy: str, steps: int | None = None) -> bool:
        return resolve_jit_compile(self.strategy, requested, policy, steps)

    def finetune_jit_compile(self, requested: bool | str | None) -> bool:
        return requested not in (None, "auto") and bool(requested)   # off: compiling costs CPUs more than epochs gain

    def steps_per_execution(self, requested: int) -> int:
        return resolve_steps_per_execution(self.strategy, requested)

    def pipeline_batch_size(self, global_batch_size: int) -> int:
        return per_replica_batch_size(global_batch_size, self.strategy)

    def input_context(self) -> tf.distribute.InputContext:
        return tf.distribute.InputContext()

    def prepare(self, model: keras.Model) -> None:
        use_global_batch_losses(model)

    def after_build(self, model: keras.Model) -> None:
        skip_keras_symbolic_build(model)
        make_logs_reducible_across_workers(model, self.strategy)

    def dataset(self, dataset_fn: DatasetFn, global_batch_size: int, *, skip_steps: int = 0):
        return distribute_dataset(self.strategy, dataset_fn, global_batch_size, skip_steps=skip_steps)

    def checkpoint(self, model_dir: str, model: keras.Model, optimizer: keras.optimizers.Optimizer,
                   max_to_keep: int) -> TrainingCheckpoint:
        return TrainingCheckpoint(model_dir, model, optimizer, max_to_keep=max_to_keep, strategy=self.strategy)

    def fit_context(self, policy: str, jit_compile: bool) -> ContextManager:
        return elementwise_clustering(policy, self.strategy, jit_compile)

    def fit_callbacks(self) -> list[keras.callbacks.Callback]:
        return []


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
