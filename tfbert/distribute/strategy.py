"""Pick a `tf.distribute.Strategy` for the hardware this process runs on.

TPU first: a Colab/Cloud TPU VM (`tpu="local"`), a named TPU or a
`grpc://host:port` address goes through `TPUClusterResolver`; several
machines go through `MultiWorkerMirroredStrategy` configured by `TF_CONFIG`;
all local GPUs through `MirroredStrategy`; otherwise the default (CPU)
strategy.
"""

from __future__ import annotations

import json
import logging
import os

import tensorflow as tf

from tfbert import accelerators

logger = logging.getLogger(__name__)

STRATEGY_KINDS = ("auto", "tpu", "gpu", "cpu", "multiworker")


def tpu_is_detectable() -> bool:
    """Whether a TPU can be seen without contacting anything (cheap check).

    `tfbert.accelerators.evidence`: the TPU VM device files (`/dev/accel*`, `/dev/vfio/<n>`) and the
    variables Cloud TPU and Colab set (`TPU_NAME`, `TPU_ACCELERATOR_TYPE`, `COLAB_TPU_ADDR`).

    Example:
        >>> isinstance(tpu_is_detectable(), bool)
        True
    """
    return bool(accelerators.evidence().tpu)


def tf_config_worker_count() -> int:
    """Number of workers (chief included) declared in `TF_CONFIG`; 0 if unset."""
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        return 0
    cluster = json.loads(raw).get("cluster", {})
    return len(cluster.get("worker", [])) + len(cluster.get("chief", []))


def resolve_strategy(kind: str = "auto", tpu: str | None = None) -> tf.distribute.Strategy:
    """Return the distribution strategy for `kind`.

    Args:
        kind: `"auto"`, `"tpu"`, `"gpu"`, `"cpu"` or `"multiworker"`.
            `"auto"` tries a TPU (only when one is cheaply detectable), then a
            `TF_CONFIG` with several workers, then local GPUs, then the CPU.
        tpu: TPU name or `grpc://` address for `TPUClusterResolver`; `None`
            means `TPU_NAME`/`COLAB_TPU_ADDR` from the environment, else
            `"local"` (a TPU VM).

    Raises:
        ValueError: unknown `kind`, or `"tpu"`/`"gpu"`/`"multiworker"`
            requested but not available.

    Example:
        >>> strategy = resolve_strategy("cpu")
        >>> strategy.num_replicas_in_sync
        1
    """
    if kind not in STRATEGY_KINDS:
        raise ValueError(
            f"Unknown strategy kind {kind!r}; expected one of {', '.join(STRATEGY_KINDS)}."
        )
    if kind == "tpu" or (kind == "auto" and (tpu is not None or tpu_is_detectable())):
        return _tpu_strategy(tpu)
    if kind == "multiworker" or (kind == "auto" and tf_config_worker_count() > 1):
        return _multiworker_strategy()
    gpus = tf.config.list_logical_devices("GPU")
    if kind == "gpu" and not gpus:
        raise ValueError(
            "strategy kind 'gpu' was requested but TensorFlow sees no GPU "
            "(tf.config.list_logical_devices('GPU') is empty); check the CUDA "
            "install or use kind='cpu'."
        )
    if kind in ("gpu", "auto") and gpus:
        return tf.distribute.MirroredStrategy([device.name for device in gpus])
    return tf.distribute.get_strategy()


def _tpu_strategy(tpu: str | None) -> tf.distribute.TPUStrategy:
    address = tpu or os.environ.get("TPU_NAME") or _colab_grpc_address() or "local"
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=address)
        if address != "local":
            tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, RuntimeError, tf.errors.OpError) as error:
        raise ValueError(
            f"strategy kind 'tpu' was requested but no TPU could be initialised at "
            f"{address!r}: {error}. On a Colab TPU VM use tpu='local'; elsewhere "
            "pass the TPU name or a grpc://host:port address."
        ) from error
    return tf.distribute.TPUStrategy(resolver)


def _colab_grpc_address() -> str | None:
    address = os.environ.get("COLAB_TPU_ADDR")
    return f"grpc://{address}" if address else None


def _multiworker_strategy() -> tf.distribute.MultiWorkerMirroredStrategy:
    if tf_config_worker_count() < 1:
        raise ValueError(
            "strategy kind 'multiworker' needs TF_CONFIG with a cluster of workers, "
            'e.g. {"cluster": {"worker": ["host1:port", "host2:port"]}, '
            '"task": {"type": "worker", "index": 0}}.'
        )
    return tf.distribute.MultiWorkerMirroredStrategy()


def strategy_kind(strategy: tf.distribute.Strategy) -> str:
    """Short name of a strategy: `"tpu"`, `"multiworker"`, `"mirrored"` or `"default"`."""
    if isinstance(strategy, tf.distribute.TPUStrategy):
        return "tpu"
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return "multiworker"
    if isinstance(strategy, tf.distribute.MirroredStrategy):
        return "mirrored"
    return "default"


def replica_devices(strategy: tf.distribute.Strategy) -> tuple[str, ...]:
    """The devices holding the replicas of this worker."""
    if strategy_kind(strategy) == "default":
        return (tf.config.list_logical_devices()[0].name,)
    return tuple(strategy.extended.worker_devices)


def describe_strategy(strategy: tf.distribute.Strategy) -> dict:
    """A loggable summary: kind, number of replicas, devices, workers.

    Example:
        >>> describe_strategy(resolve_strategy("cpu"))["replicas"]
        1
    """
    return {
        "kind": strategy_kind(strategy),
        "replicas": strategy.num_replicas_in_sync,
        "devices": list(replica_devices(strategy)),
        "workers": max(tf_config_worker_count(), 1)
        if strategy_kind(strategy) == "multiworker"
        else 1,
    }


def replicas_are_cpu_devices(strategy: tf.distribute.Strategy) -> bool:
    """True when every replica of this worker runs on a CPU device."""
    return all("CPU" in device.upper() for device in replica_devices(strategy))
