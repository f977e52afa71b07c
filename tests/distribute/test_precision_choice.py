"""`--precision auto|fp32|bf16`: the choice from stated matmul peaks (nothing is timed), the flag, and bf16 parity."""

import argparse

import keras
import numpy as np
import pytest
import tensorflow as tf

from tfbert.commands.precision_flag import add_precision_argument
from tfbert.distribute.peaks import MatmulPeaks, cpu_bf16_flags, describe_cpu_bf16
from tfbert.distribute.precision import PRECISIONS, apply_precision, peaks_from_environment, pick_precision
from tfbert.models.pretraining import PretrainingModel
from models.model_fixtures import pretraining_batch, tiny_config

CPU = tf.distribute.get_strategy()


def stated(float32: float, bfloat16: float):
    return lambda: MatmulPeaks(float32, bfloat16)


@pytest.mark.parametrize("bfloat16, policy", [(93.0, "float32"), (149.0, "float32"), (150.0, "mixed_bfloat16"),
                                              (270.0, "mixed_bfloat16")])
def test_auto_picks_bf16_on_a_cpu_only_where_its_peak_is_at_least_1_5x_fp32(bfloat16, policy):
    choice = pick_precision(CPU, "auto", peaks=stated(100.0, bfloat16))
    assert choice.policy == policy
    assert choice.describe() == f"precision: {policy} (bf16 matmul {bfloat16 / 100:.2f}x fp32 on this CPU)"


def test_explicit_precisions_skip_the_measurement_and_aliases_name_keras_policies():
    def never():
        raise AssertionError("an explicit precision measured the peaks")

    assert pick_precision(CPU, "fp32", peaks=never).policy == "float32"
    assert pick_precision(CPU, "bf16", peaks=never).describe() == "precision: mixed_bfloat16 (requested)"
    for policy in ("float32", "mixed_bfloat16", "mixed_float16"):
        assert pick_precision(CPU, policy, peaks=never).policy == policy
    with pytest.raises(ValueError, match="Unknown precision 'fp8'"):
        pick_precision(CPU, "fp8")


def test_stated_peaks_come_from_the_environment_and_bad_values_say_what_to_give(monkeypatch):
    monkeypatch.setenv("TFBERT_MATMUL_PEAKS", "600,1500")
    assert peaks_from_environment().ratio == 2.5
    assert pick_precision(CPU).policy == "mixed_bfloat16"
    monkeypatch.setenv("TFBERT_MATMUL_PEAKS", "fast")
    with pytest.raises(ValueError, match="two GFLOP/s numbers, float32 then bfloat16"):
        peaks_from_environment()


def test_auto_keeps_float32_on_a_cpu_for_models_too_narrow_to_gain_from_bf16():
    narrow = pick_precision(CPU, "auto", peaks=stated(200.0, 1000.0), hidden_size=256)
    assert narrow.describe() == ("precision: float32 (bf16 matmul 5.00x fp32 on this CPU, but hidden size 256 < 512: "
                                 "matmuls too narrow to gain on a CPU)")
    assert pick_precision(CPU, "auto", peaks=stated(200.0, 1000.0), hidden_size=512).policy == "mixed_bfloat16"
    assert pick_precision(CPU, "bf16", peaks=stated(200.0, 1000.0), hidden_size=128).policy == "mixed_bfloat16"


def test_cpu_bf16_flags_are_read_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_tile amx_bf16\n")
    assert cpu_bf16_flags(cpuinfo) == ("avx512_bf16", "amx_bf16", "amx_tile")
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\n")
    assert describe_cpu_bf16(cpu_bf16_flags(cpuinfo)) == "CPU bfloat16 instructions: none (no AVX512-BF16, no AMX)"
    assert cpu_bf16_flags(tmp_path / "absent") is None


def test_precision_flag_takes_the_short_names_and_the_keras_policies():
    parser = argparse.ArgumentParser()
    add_precision_argument(parser)
    assert parser.parse_args([]).precision == "auto"
    for name in PRECISIONS:
        assert parser.parse_args(["--precision", name]).precision == name
    with pytest.raises(SystemExit):
        parser.parse_args(["--precision", "fp8"])


@pytest.fixture
def restore_policy():
    previous = keras.mixed_precision.global_policy()
    yield
    keras.mixed_precision.set_global_policy(previous)


def test_tiny_model_trains_a_step_under_bf16_with_outputs_close_to_float32(restore_policy):
    config = tiny_config("bert")
    inputs, labels = pretraining_batch(config)
    features = {name: inputs[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    apply_precision("fp32")
    reference = PretrainingModel(config)
    reference(inputs)
    expected = keras.ops.convert_to_numpy(reference.encoder(features)["sequence_output"])
    apply_precision("bf16")
    model = PretrainingModel(config)
    model(inputs)
    model.set_weights(reference.get_weights())
    actual = keras.ops.convert_to_numpy(keras.ops.cast(model.encoder(features)["sequence_output"], "float32"))
    cosine = np.sum(actual * expected, -1) / np.linalg.norm(actual, axis=-1) / np.linalg.norm(expected, axis=-1)
    assert model.encoder.compute_dtype == "bfloat16" and cosine.min() >= 0.999

    model.compile(optimizer=keras.optimizers.Adam(1e-3))
    before = [np.array(weight) for weight in model.trainable_weights]
    loss = model.train_on_batch(inputs, labels, return_dict=True)["loss"]
    assert np.isfinite(loss) and all(weight.dtype == "float32" for weight in model.trainable_weights)
    assert any(not np.array_equal(old, np.array(new)) for old, new in zip(before, model.trainable_weights))
