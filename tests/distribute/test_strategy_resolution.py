"""Strategy resolution, precision choice and batch splitting on this CPU-only machine."""

import keras
import pytest
import tensorflow as tf

from tfbert.distribute import (
    choose_precision,
    describe_strategy,
    per_replica_batch_size,
    resolve_strategy,
    shard_for_input_pipeline,
    tpu_is_detectable,
)
from tfbert.distribute.strategy import tf_config_worker_count


@pytest.fixture
def no_accelerator_env(monkeypatch):
    for name in ("COLAB_TPU_ADDR", "TPU_NAME", "TF_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def test_cpu_kind_is_the_default_strategy():
    strategy = resolve_strategy("cpu")
    assert strategy is tf.distribute.get_strategy()
    assert describe_strategy(strategy) == {
        "kind": "default",
        "replicas": 1,
        "devices": [tf.config.list_logical_devices()[0].name],
        "workers": 1,
    }


def test_auto_falls_back_to_cpu_here(no_accelerator_env):
    if tpu_is_detectable():
        pytest.skip("this host has a TPU")
    assert resolve_strategy("auto").num_replicas_in_sync == 1


def test_unknown_kind_is_rejected():
    with pytest.raises(ValueError, match="Unknown strategy kind 'tpuu'.*auto, tpu, gpu, cpu, multiworker"):
        resolve_strategy("tpuu")


def test_gpu_kind_without_gpu_says_so():
    if tf.config.list_logical_devices("GPU"):
        pytest.skip("this host has a GPU")
    with pytest.raises(ValueError, match="'gpu' was requested but TensorFlow sees no GPU"):
        resolve_strategy("gpu")


def test_tpu_kind_without_tpu_says_so(no_accelerator_env):
    if tpu_is_detectable():
        pytest.skip("this host has a TPU")
    with pytest.raises(ValueError, match="'tpu' was requested but no TPU could be initialised at 'local'"):
        resolve_strategy("tpu")


def test_multiworker_kind_needs_tf_config(no_accelerator_env):
    with pytest.raises(ValueError, match="needs TF_CONFIG"):
        resolve_strategy("multiworker")


def test_tf_config_worker_count(monkeypatch):
    monkeypatch.setenv(
        "TF_CONFIG",
        '{"cluster": {"chief": ["a:1"], "worker": ["b:1", "c:1"]}, "task": {"type": "chief", "index": 0}}',
    )
    assert tf_config_worker_count() == 3


def test_tpu_detection_reads_colab_environment(monkeypatch):
    monkeypatch.setenv("COLAB_TPU_ADDR", "10.0.0.2:8470")
    assert tpu_is_detectable()


def test_precision_on_cpu_without_faster_bf16_is_float32_and_explicit_requests_pass_through():
    strategy = tf.distribute.get_strategy()
    assert choose_precision(strategy) == "float32"   # tests/conftest.py states no bfloat16 instructions
    assert choose_precision(strategy, "mixed_bfloat16") == "mixed_bfloat16"
    with pytest.raises(ValueError, match="Unknown precision"):
        choose_precision(strategy, "fp8")


def test_mixed_float16_compile_wraps_optimizer_in_loss_scale_optimizer():
    """Keras does the wrapping itself, so the driver must not."""
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        model.compile(optimizer=keras.optimizers.AdamW(), loss="mse")
    finally:
        keras.mixed_precision.set_global_policy(previous)
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    assert isinstance(model.optimizer.inner_optimizer, keras.optimizers.AdamW)


def test_global_batch_splits_evenly_or_fails():
    strategy = tf.distribute.get_strategy()
    assert per_replica_batch_size(96, strategy) == 96
    with pytest.raises(ValueError, match="cannot be split evenly"):
        per_replica_batch_size(0, strategy)


def test_shard_for_input_pipeline_keeps_every_nth_element():
    context = tf.distribute.InputContext(num_input_pipelines=3, input_pipeline_id=2)
    shard = shard_for_input_pipeline(tf.data.Dataset.range(9), context)
    assert list(shard.as_numpy_iterator()) == [2, 5, 8]
