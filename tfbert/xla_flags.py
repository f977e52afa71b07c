"""The `TF_XLA_FLAGS` tfbert's CPU bfloat16 path needs, set before TensorFlow reads them.

TensorFlow reads `TF_XLA_FLAGS` once, when it first optimizes a function graph;
`import tfbert` calls `allow_fusible_clustering` so the flags are there by then
(see `tfbert.distribute.cpu_bfloat16` for why they are needed). This module
imports nothing heavy: `import tfbert` stays free of TensorFlow.
"""

from __future__ import annotations

import os
from typing import MutableMapping

# FUSIBLE: elementwise ops, reductions, casts; the variable ops let an optimizer update fuse with its reads and writes.
CLUSTERING_FLAGS = ("--tf_xla_cpu_global_jit",
                    "--tf_xla_ops_to_cluster=FUSIBLE,ReadVariableOp,AssignVariableOp,AssignAddVariableOp,AssignSubVariableOp")
SERVING_XLA_FLAGS = " ".join(("--tf_xla_auto_jit=2", *CLUSTERING_FLAGS))
XLA_FLAGS_VARIABLE = "TF_XLA_FLAGS"


def allow_fusible_clustering(environ: MutableMapping[str, str] = os.environ) -> None:
    """Adds the flags `fusible_op_clustering` needs to `TF_XLA_FLAGS`, keeping the user's own.

    Inert until auto-clustering is switched on; effective only where TensorFlow
    has not optimized a function graph yet in this process.

    Example:
        >>> environ = {"TF_XLA_FLAGS": "--tf_xla_min_cluster_size=4"}
        >>> allow_fusible_clustering(environ)
        >>> environ["TF_XLA_FLAGS"].split()[:2]
        ['--tf_xla_min_cluster_size=4', '--tf_xla_cpu_global_jit']
    """
    flags = environ.get(XLA_FLAGS_VARIABLE, "").split()
    if any(flag.startswith("--tf_xla_ops_to_cluster") for flag in flags):
        return   # the user chose which ops XLA may cluster
    environ[XLA_FLAGS_VARIABLE] = " ".join([*flags, *(flag for flag in CLUSTERING_FLAGS if flag not in flags)])


def clustering_is_allowed(environ: MutableMapping[str, str] = os.environ) -> bool:
    """Whether `TF_XLA_FLAGS` holds both flags `fusible_op_clustering` needs."""
    flags = environ.get(XLA_FLAGS_VARIABLE, "").split()
    return all(flag in flags for flag in CLUSTERING_FLAGS)
