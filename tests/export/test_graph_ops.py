"""Every op of every exported graph (library functions included) is a TensorFlow core or TF-Text op, never Python."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

from tfbert.export.ops import PYTHON_ONLY_OPS, check_servable, saved_model_op_types


@pytest.fixture(scope="module")
def allowed_ops():
    script = Path(__file__).with_name("op_registry.py")
    output = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=120)
    registry = json.loads(output.stdout.strip().splitlines()[-1])
    assert "FastWordpieceTokenizeWithOffsets" in registry["text"]
    return (set(registry["core"]) | set(registry["text"])) - PYTHON_ONLY_OPS


def test_every_op_is_core_or_tf_text(exports, allowed_ops):
    for task, directory in exports.items():
        ops = saved_model_op_types(directory)
        assert "StatefulPartitionedCall" in ops or "PartitionedCall" in ops
        assert ops <= allowed_ops, f"{task}: {sorted(ops - allowed_ops)}"
        assert not ops & PYTHON_ONLY_OPS


def test_signature_graphs_hold_no_python(loaded):
    for task, model in loaded.items():
        for name, function in model.signatures.items():
            graph = function.graph.as_graph_def()
            ops = {node.op for node in graph.node}
            ops |= {node.op for function in graph.library.function for node in function.node_def}
            assert not ops & PYTHON_ONLY_OPS, (task, name)


def test_py_function_is_refused(tmp_path):
    module = tf.Module()
    module.f = tf.function(lambda x: tf.py_function(lambda v: v, [x], tf.float32),
                           input_signature=[tf.TensorSpec([None], tf.float32)])
    tf.saved_model.save(module, str(tmp_path), signatures={"serving_default": module.f.get_concrete_function()})
    with pytest.raises(ValueError, match="EagerPyFunc"):
        check_servable(tmp_path)
