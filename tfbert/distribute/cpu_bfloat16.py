"""bfloat16 on CPUs: matmuls on oneDNN, the elementwise ops between them fused by XLA.

On a CPU with AMX or AVX512-BF16, TensorFlow's own MatMul kernels (oneDNN) run
bfloat16 at several times their float32 rate, but XLA's CPU backend has no
bfloat16 dot kernel: an XLA-compiled (`jit_compile=True`) step computes its
bfloat16 dots at the float32 rate or below (Sapphire Rapids, 2 cores: oneDNN
1,064 GFLOP/s, XLA 257; `benchmarks/RESULTS.md`). A plain graph-mode step keeps
the fast matmuls but runs each layer norm, softmax, GELU, dropout and optimizer
update as separate kernels, which costs back most of what they gained. XLA's
auto-clustering restricted to its *fusible* ops (elementwise ops, reductions,
casts; never MatMul) gives both, so a bfloat16 step on such a CPU runs in graph
mode with that clustering switched on.

TensorFlow reads the two flags this needs (`--tf_xla_cpu_global_jit`,
`--tf_xla_ops_to_cluster=FUSIBLE,...`, `tfbert.xla_flags.CLUSTERING_FLAGS`) from
`TF_XLA_FLAGS` once, when it first optimizes a function graph, and has no call
that sets them afterwards; so `import tfbert` adds them to `TF_XLA_FLAGS`
(`allow_fusible_clustering`), where they do nothing until clustering is switched
on (`fusible_op_clustering`). TF Serving reads the same variable: serve a
bfloat16 export on such a CPU with `-e TF_XLA_FLAGS="..."` set to
`tfbert.xla_flags.SERVING_XLA_FLAGS`.

Example:
    >>> with fusible_op_clustering():   # a bfloat16 CPU with TF_XLA_FLAGS set before TensorFlow starts  # doctest: +SKIP
    ...     model.fit(dataset)   # compiled with jit_compile=False
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Iterator

import tensorflow as tf

from tfbert.distribute.strategy import strategy_kind
from tfbert.xla_flags import CLUSTERING_FLAGS, XLA_FLAGS_VARIABLE, clustering_is_allowed

logger = logging.getLogger(__name__)


def runs_bfloat16_on_cpu(policy: str, strategy) -> bool:
    """Whether `policy` computes in bfloat16 on CPU devices (no TPU, no GPU) under `strategy`."""
    return (policy == "mixed_bfloat16" and strategy_kind(strategy) != "tpu"
            and not tf.config.list_physical_devices("GPU"))


def users_auto_jit_level() -> str:
    """The `--tf_xla_auto_jit` level `TF_XLA_FLAGS` sets, "0" where it sets none."""
    levels = [flag.partition("=")[2] for flag in os.environ.get(XLA_FLAGS_VARIABLE, "").split()
              if flag.startswith("--tf_xla_auto_jit=")]
    return levels[-1] if levels else "0"


def set_auto_jit(level: str) -> None:
    """TensorFlow's auto-clustering level for the function graphs it optimizes from now on ("0" off, "2" on)."""
    from tensorflow.python.client import pywrap_tf_session

    pywrap_tf_session.TF_SetXlaAutoJitMode(level)


@contextlib.contextmanager
def fusible_op_clustering() -> Iterator[bool]:
    """XLA auto-clustering of fusible ops for the functions first run inside; yields whether it is on.

    Functions keep the clusters they were optimized with after the block ends.
    Where `TF_XLA_FLAGS` lacked the flags when TensorFlow read it (tfbert imported
    after TensorFlow ran a function), says how to set them and runs unclustered.
    """
    if not clustering_is_allowed():
        logger.warning("bfloat16 on this CPU runs without fusing its elementwise ops (slower): start Python with "
                       "TF_XLA_FLAGS='%s', or import tfbert before TensorFlow runs anything",
                       " ".join(CLUSTERING_FLAGS))
        yield False
        return
    set_auto_jit("2")
    try:
        yield True
    finally:
        set_auto_jit(users_auto_jit_level())


def elementwise_clustering(policy: str, strategy, use_jit: bool) -> contextlib.AbstractContextManager:
    """`fusible_op_clustering()` where a bfloat16 step runs on a CPU in graph mode, else a block that does nothing."""
    if use_jit or not runs_bfloat16_on_cpu(policy, strategy):
        return contextlib.nullcontext()
    logger.info("bfloat16 on the CPU: matmuls on oneDNN, elementwise ops fused by XLA auto-clustering")
    return fusible_op_clustering()
