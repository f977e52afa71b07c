"""Which ops a SavedModel needs, and whether a TensorFlow Serving model server has them all.

TF Serving links TensorFlow's core kernels and TF-Text's op library (`tensorflow_text:ops_lib`
in its model server build), but no Python: `PyFunc`, `EagerPyFunc` (`tf.py_function`,
`tf.numpy_function`) cannot run there. `saved_model_op_types` walks every graph and every
library function of a SavedModel; `registered_op_names` lists the ops this process has
registered (TensorFlow's, plus TF-Text's once `tensorflow_text` is imported).

Example:
    >>> python_ops(saved_model_op_types("saved_models/sst2/1"))
    set()
"""

from __future__ import annotations

from pathlib import Path

from tensorflow.core.framework import op_def_pb2
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.client import pywrap_tf_session

PYTHON_ONLY_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})


def saved_model_op_types(saved_model_dir: str | Path) -> set[str]:
    """Op types of every node in every meta graph and library function of `saved_model.pb`.

    Calls of library functions by name (nodes whose op is a function) are left out: their
    bodies are walked instead.
    """
    proto = saved_model_pb2.SavedModel()
    proto.ParseFromString((Path(saved_model_dir) / "saved_model.pb").read_bytes())
    types: set[str] = set()
    for meta_graph in proto.meta_graphs:
        library = meta_graph.graph_def.library
        functions = {function.signature.name for function in library.function}
        types.update(node.op for node in meta_graph.graph_def.node)
        for function in library.function:
            types.update(node.op for node in function.node_def)
        types -= functions
    return types


def registered_op_names() -> set[str]:
    """Names of all ops registered in this process."""
    buffer = pywrap_tf_session.TF_GetAllOpList()
    ops = op_def_pb2.OpList()
    ops.ParseFromString(pywrap_tf_session.TF_GetBuffer(buffer))
    return {op.name for op in ops.op}


def python_ops(op_types: set[str]) -> set[str]:
    """The ops among `op_types` that need a Python interpreter (never available in TF Serving)."""
    return set(op_types) & PYTHON_ONLY_OPS


def check_servable(saved_model_dir: str | Path) -> None:
    """Raises `ValueError` naming the Python-only ops if the SavedModel has any."""
    found = python_ops(saved_model_op_types(saved_model_dir))
    if found:
        raise ValueError(f"{saved_model_dir} uses {', '.join(sorted(found))}, which TF Serving cannot run")
