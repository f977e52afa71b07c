"""`JaxDevices`: training with Keras' JAX trainer under a `keras.distribution` (TPU v5e/v5p/v6e, GPUs, a CPU).

The model's variables are laid out by the distribution: replicated over every device (data parallel), or on a
`DATAxMODEL` mesh where the family's layout (`tfbert.models.layout`) shards the token table, the attention and the
feed-forward kernels over the model axis, so a model too large for one chip still trains. Each step is one XLA
program over the whole mesh (SPMD): the losses are the global batch's without any cross-replica sum.

The input stays tfbert's tf.data pipeline on the host CPU (TF-Text tokenizing and masking, or tf.data service);
each process reads its own shard (`input_context`) and Keras hands its batches to the devices with the
distribution's data layout. Several processes (a TPU pod slice, several GPU hosts) join through
`keras.distribution.initialize` (`initialize_processes`).

Example:
    >>> devices = JaxDevices.from_settings(TrainingSettings(backend="jax"))   # KERAS_BACKEND=jax  # doctest: +SKIP
    >>> devices.describe()  # doctest: +SKIP
    'JAX, 8 cpu devices, data parallel, 1 process'
"""

from __future__ import annotations

import logging
import math
import os
from typing import ContextManager

import jax
import keras
import tensorflow as tf

from tfbert.architectures import ArchitectureSpec
from tfbert.distribute.data import DatasetFn
from tfbert.distribute.precision import PrecisionChoice, precision_for_devices
from tfbert.models.layout import keras_distribution
from tfbert.training.checkpointing import KerasWeightsCheckpoint
from tfbert.training.settings import TrainingSettings

logger = logging.getLogger(__name__)

# What `keras.distribution.initialize` reads; the command line's --coordinator/--num-processes/--process-id set them.
PROCESS_VARIABLES = ("KERAS_DISTRIBUTION_JOB_ADDRESSES", "KERAS_DISTRIBUTION_NUM_PROCESSES",
                     "KERAS_DISTRIBUTION_PROCESS_ID")


def initialize_processes() -> None:
    """Join the other processes of a multi-host run (once per process): where `KERAS_DISTRIBUTION_*` name the
    cluster, or on a Cloud TPU pod slice (`TPU_WORKER_HOSTNAMES` lists several hosts; JAX finds the rest)."""
    if jax.distributed.is_initialized():
        return
    pod_slice = len([host for host in os.environ.get("TPU_WORKER_HOSTNAMES", "").split(",") if host]) > 1
    if pod_slice or any(os.environ.get(name) for name in PROCESS_VARIABLES):
        keras.distribution.initialize()


def jax_precision(platform: str, requested: str = "auto") -> PrecisionChoice:
    """The dtype policy for JAX devices of `platform`: `precision_for_devices`'s (bfloat16 on TPUs and on GPUs of
    compute capability 8.0 or more), except float32 for `auto` on a CPU, where XLA's CPU backend has no fast
    bfloat16 matmul (TensorFlow's oneDNN has, so its CPU rule differs).

    Example:
        >>> jax_precision("tpu").policy, jax_precision("cpu").policy, jax_precision("cpu", "bf16").policy
        ('mixed_bfloat16', 'float32', 'mixed_bfloat16')
    """
    if platform == "cpu" and requested == "auto":
        return PrecisionChoice("float32", "XLA's CPU backend has no fast bfloat16 matmul")
    capability = _gpu_capability() if platform == "gpu" else None
    return precision_for_devices(platform, requested, gpu_capability=capability, loss_scaling=True)


def _gpu_capability() -> tuple[int, int] | None:
    text = getattr(jax.devices()[0], "compute_capability", None)
    try:
        major, minor = (int(part) for part in str(text).split("."))
    except ValueError:
        return None
    return major, minor


class JaxDevices:
    """Every JAX device of the run under `distribution` (`tfbert.training.backends.TrainingDevices`)."""

    name = "jax"

    def __init__(self, distribution: keras.distribution.Distribution, mesh: str | None = None):
        self.distribution = distribution
        self.distribution.auto_shard_dataset = False   # each process reads its own shard (`input_context`)
        # The process's distribution from now on, so that `evaluate` and `predict` after training use the mesh too.
        keras.distribution.set_distribution(distribution)
        self.mesh = mesh
        self.platform = jax.devices()[0].platform
        self.replicas = jax.device_count()
        self.processes = jax.process_count()
        self.one_host = self.processes == 1
        mesh_shape = dict(zip(distribution.device_mesh.axis_names, distribution.device_mesh.shape))
        self.data_parallel = mesh_shape.get(distribution.batch_dim_name, self.replicas)

    @classmethod
    def from_settings(cls, settings: TrainingSettings, family: ArchitectureSpec | None = None) -> JaxDevices:
        """`settings.mesh` over every device, with `family`'s layout; `strategy` is refused (TensorFlow's)."""
        if settings.strategy not in (None, "auto"):
            raise ValueError(f"strategy={settings.strategy!r} is TensorFlow's (tf.distribute); with backend='jax' the "
                             "devices come from keras.distribution: leave strategy out, and give mesh='DATAxMODEL' "
                             "for model parallelism")
        initialize_processes()
        return cls(keras_distribution(settings.mesh, family), settings.mesh)

    def describe(self) -> str:
        split = "data parallel" if self.mesh is None else f"mesh {self.mesh} (data x model)"
        processes = f"{self.processes} process{'es' if self.processes > 1 else ''}"
        return f"JAX, {self.replicas} {self.platform} device{'s' if self.replicas > 1 else ''}, {split}, {processes}"

    def scope(self) -> ContextManager:
        return self.distribution.scope()

    def check_batch(self, global_batch_size: int, accumulation: int) -> None:
        shards = math.lcm(self.data_parallel, self.processes)
        if global_batch_size <= 0 or global_batch_size % shards:
            raise ValueError(f"Global batch size {global_batch_size} cannot be split evenly over the data-parallel "
                             f"shards of {self.describe()}; use a positive multiple of {shards}.")

    def precision(self, requested: str, hidden_size: int | None = None) -> str:
        choice = jax_precision(self.platform, requested)
        logger.info(choice.describe())
        return choice.policy

    def jit_compile(self, requested: bool | str, policy: str, steps: int | None = None) -> bool:
        return requested in ("auto", None) or bool(requested)   # JAX steps are XLA programs; False runs them eagerly

    def finetune_jit_compile(self, requested: bool | str | None) -> bool:
        return requested is not False

    def steps_per_execution(self, requested: int) -> int:
        return requested

    def pipeline_batch_size(self, global_batch_size: int) -> int:
        return global_batch_size // self.processes

    def input_context(self) -> tf.distribute.InputContext:
        return tf.distribute.InputContext(num_input_pipelines=self.processes, input_pipeline_id=jax.process_index(),
                                          num_replicas_in_sync=self.replicas)

    def prepare(self, model: keras.Model) -> None:
        """Nothing: one SPMD program computes the global batch's losses."""

    def after_build(self, model: keras.Model) -> None:
        """Nothing: Keras' JAX trainer takes the model as built."""

    def dataset(self, dataset_fn: DatasetFn, global_batch_size: int, *, skip_steps: int = 0) -> tf.data.Dataset:
        dataset = dataset_fn(self.pipeline_batch_size(global_batch_size), self.input_context())
        return dataset.skip(skip_steps) if skip_steps else dataset

    def checkpoint(self, model_dir: str, model: keras.Model, optimizer: keras.optimizers.Optimizer,
                   max_to_keep: int) -> KerasWeightsCheckpoint:
        return KerasWeightsCheckpoint(model_dir, model, max_to_keep=max_to_keep, chief=jax.process_index() == 0)

    def fit_context(self, policy: str, jit_compile: bool) -> ContextManager:
        return self.distribution.scope()   # Keras lays each batch out by the distribution in effect

    def fit_callbacks(self) -> list[keras.callbacks.Callback]:
        return [StateOnTheMesh(self.distribution)]


class StateOnTheMesh(keras.callbacks.Callback):
    """Keeps every variable of the model, its optimizer and its metrics laid out on the distribution's mesh.

    Keras 3.15 leaves a value it assigns as it is where its sharding is equivalent to the variable's layout (on one
    device: a single-device array), while the train step returns arrays on the mesh; JAX (0.10) keys its compiled
    steps by those shardings, so the step compiled again after the first step and after every metrics reset at an
    epoch's start (each checkpoint): 3 compiles of 30 s in a 3-checkpoint bert_tiny run. Placing the state on the
    mesh before each epoch's first step keeps one compiled step.
    """

    def __init__(self, distribution: keras.distribution.Distribution):
        super().__init__()
        self.distribution = distribution

    def on_train_begin(self, logs=None):
        self._place(self.model.variables, self.model.optimizer.variables)

    def on_epoch_begin(self, epoch, logs=None):
        self._place(self.model.metrics_variables)

    def _place(self, *groups) -> None:
        for variable in (variable for group in groups for variable in group):
            sharding = self.distribution.get_variable_layout(variable).backend_layout
            if not isinstance(variable.value.sharding, jax.sharding.NamedSharding):
                variable.assign(jax.device_put(variable.value, sharding))
