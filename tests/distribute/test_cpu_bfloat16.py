"""bfloat16 on CPUs: TF_XLA_FLAGS set by `import tfbert`, graph mode for bf16 steps, and what the clustering fuses.

The clustering check runs in a fresh process: TensorFlow reads TF_XLA_FLAGS once, at the first function
it optimizes, and the test process has run many before.
"""

import json
import logging
import os
import subprocess
import sys
import textwrap

import keras
import tensorflow as tf

from tfbert.distribute.cpu_bfloat16 import elementwise_clustering, runs_bfloat16_on_cpu, users_auto_jit_level
from tfbert.training import train
from tfbert.training.backends.tensorflow_devices import resolve_jit_compile
from tfbert.xla_flags import CLUSTERING_FLAGS, SERVING_XLA_FLAGS, allow_fusible_clustering, clustering_is_allowed
from training.toy_pretrainer import ToyPretrainer, toy_dataset_fn

DEFAULT = tf.distribute.get_strategy()


def test_import_adds_the_clustering_flags_and_keeps_the_users_own():
    environ = {"TF_XLA_FLAGS": "--tf_xla_min_cluster_size=4"}
    allow_fusible_clustering(environ)
    allow_fusible_clustering(environ)
    assert environ["TF_XLA_FLAGS"].split() == ["--tf_xla_min_cluster_size=4", *CLUSTERING_FLAGS]
    assert clustering_is_allowed(environ) and not clustering_is_allowed({})
    assert clustering_is_allowed(os.environ)   # tfbert was imported by this test module
    mine = {"TF_XLA_FLAGS": "--tf_xla_ops_to_cluster=PW"}
    allow_fusible_clustering(mine)
    assert mine == {"TF_XLA_FLAGS": "--tf_xla_ops_to_cluster=PW"}   # the user chose which ops XLA clusters
    assert SERVING_XLA_FLAGS.split() == ["--tf_xla_auto_jit=2", *CLUSTERING_FLAGS]


def test_bf16_on_a_cpu_trains_in_graph_mode_everything_else_under_xla(monkeypatch):
    assert runs_bfloat16_on_cpu("mixed_bfloat16", DEFAULT) and not runs_bfloat16_on_cpu("float32", DEFAULT)
    assert resolve_jit_compile(DEFAULT, "auto", "float32") is True
    assert resolve_jit_compile(DEFAULT, "auto", "mixed_bfloat16") is False
    assert resolve_jit_compile(DEFAULT, True, "mixed_bfloat16") is True   # asked for: kept
    assert isinstance(elementwise_clustering("float32", DEFAULT, use_jit=False), type(elementwise_clustering(
        "mixed_bfloat16", DEFAULT, use_jit=True)))   # both the do-nothing block
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=1 --tf_xla_cpu_global_jit")
    assert users_auto_jit_level() == "1"   # restored after a clustered block


CLUSTERING_PROBE = textwrap.dedent("""
    import json, pathlib, sys, tempfile
    import tensorflow as tf
    import tfbert  # noqa: F401  (sets TF_XLA_FLAGS before TensorFlow optimizes a function)
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    from tfbert.distribute.cpu_bfloat16 import fusible_op_clustering

    weights = tf.Variable(tf.random.normal((64, 64)))

    def step(x):
        hidden = tf.nn.gelu(tf.matmul(tf.cast(x, tf.bfloat16), tf.cast(weights, tf.bfloat16)))
        weights.assign_add(0.01 * tf.cast(tf.transpose(hidden), tf.float32))
        return tf.reduce_sum(tf.exp(tf.cast(hidden, tf.float32)))

    def kernels(function):
        x = tf.random.normal((64, 64))
        with tempfile.TemporaryDirectory() as logdir:
            tf.profiler.experimental.start(logdir)
            value = function(x).numpy()
            tf.profiler.experimental.stop()
            space = xplane_pb2.XSpace()
            space.ParseFromString(next(pathlib.Path(logdir).rglob("*.xplane.pb")).read_bytes())
        names = {plane.event_metadata[event.metadata_id].name.rpartition(":")[2]
                 for plane in space.planes for line in plane.lines for event in line.events}
        return value, sorted(name for name in names if name in ("_XlaRun", "_MklMatMul", "MatMul", "Gelu", "Exp",
                                                                 "Erfc", "AssignAddVariableOp"))

    with fusible_op_clustering() as on:
        clustered = kernels(tf.function(step, jit_compile=False))
    after = kernels(tf.function(step, jit_compile=False))
    json.dump({"on": on, "clustered": clustered[1], "after": after[1]}, sys.stdout)
""")


def test_clustering_fuses_the_elementwise_ops_and_the_update_and_leaves_matmuls_to_onednn():
    result = subprocess.run([sys.executable, "-c", CLUSTERING_PROBE], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "TF_XLA_FLAGS": "", "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert result.returncode == 0, result.stderr[-3000:]
    kernels = json.loads(result.stdout)
    assert kernels["on"] is True
    matmul = {"_MklMatMul", "MatMul"}
    # Inside the block: one XLA cluster holds the casts, GELU, exp, the sum and the variable update; the matmul
    # stays a TensorFlow (oneDNN) kernel.
    assert "_XlaRun" in kernels["clustered"] and matmul & set(kernels["clustered"])
    assert not {"Gelu", "Exp", "Erfc", "AssignAddVariableOp"} & set(kernels["clustered"])
    # A function first run after the block is not clustered.
    assert "_XlaRun" not in kernels["after"] and {"Exp", "AssignAddVariableOp"} <= set(kernels["after"])


def test_the_driver_trains_bf16_on_this_cpu_in_graph_mode_with_clustering(tmp_path, caplog):
    previous = keras.mixed_precision.global_policy()
    try:
        with caplog.at_level(logging.INFO, logger="tfbert"):
            model = train(ToyPretrainer, toy_dataset_fn, model_dir=str(tmp_path), steps=2, global_batch_size=8,
                          strategy=DEFAULT, checkpoint_every=2, precision="bf16", verbose=0)
    finally:
        keras.mixed_precision.set_global_policy(previous)
    assert model.jit_compile is False and int(model.optimizer.iterations.numpy()) == 2
    assert "bfloat16 on the CPU: matmuls on oneDNN, elementwise ops fused by XLA auto-clustering" in caplog.text
    assert "precision mixed_bfloat16, jit_compile=False" in caplog.text
