"""`--precision auto|fp32|bf16`: the choice from the hardware (stated CPU instructions; nothing is timed), the flag,
and bf16 parity."""

import argparse
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from tfbert.commands.precision_flag import add_precision_argument
from tfbert.distribute import peaks
from tfbert.distribute.peaks import cpu_bf16_flags, describe_cpu_bf16, peaks_from_environment
from tfbert.distribute.precision import PRECISIONS, apply_precision, pick_precision, precision_for_devices
from tfbert.models.pretraining import PretrainingModel
from models.model_fixtures import pretraining_batch, tiny_config

CPU = tf.distribute.get_strategy()
AMX = "avx512_bf16,amx_bf16,amx_tile"


@pytest.fixture(autouse=True)
def no_timing(monkeypatch):
    """`auto` never times a matmul: measuring the peaks fails the test."""
    def never(*args, **kwargs):
        raise AssertionError("--precision auto timed a matmul")

    monkeypatch.setattr(peaks, "measure_matmul_peaks", never)
    monkeypatch.setattr(peaks, "tensorflow_rate", never)


@pytest.mark.parametrize("flags, policy", [("none", "float32"), ("avx512_bf16", "mixed_bfloat16"),
                                           (AMX, "mixed_bfloat16")])
def test_auto_on_a_cpu_follows_its_bfloat16_instructions(monkeypatch, flags, policy):
    monkeypatch.setenv("TFBERT_CPU_BF16", flags)
    choices = {pick_precision(CPU, "auto").describe() for _ in range(3)}
    assert len(choices) == 1 and pick_precision(CPU, "auto").policy == policy
    if flags == "none":
        assert choices == {"precision: float32 (no bfloat16 instructions on this CPU (no AVX512-BF16, no AMX; "
                           "stated by TFBERT_CPU_BF16))"}
    else:
        assert choices == {f"precision: mixed_bfloat16 (CPU bfloat16 instructions {flags.replace(',', ', ')} "
                           "(stated by TFBERT_CPU_BF16))"}


def test_auto_on_a_cpu_reads_proc_cpuinfo_where_nothing_is_stated(monkeypatch):
    monkeypatch.delenv("TFBERT_CPU_BF16", raising=False)
    expected = "mixed_bfloat16" if cpu_bf16_flags() else "float32"
    assert pick_precision(CPU, "auto", hidden_size=768).policy == expected
    assert "/proc/cpuinfo" in pick_precision(CPU, "auto").reason


def test_explicit_precisions_skip_the_hardware_and_aliases_name_keras_policies():
    assert pick_precision(CPU, "fp32").policy == "float32"
    assert pick_precision(CPU, "bf16").describe() == "precision: mixed_bfloat16 (requested)"
    for policy in ("float32", "mixed_bfloat16", "mixed_float16"):
        assert pick_precision(CPU, policy).policy == policy
    with pytest.raises(ValueError, match="Unknown precision 'fp8'"):
        pick_precision(CPU, "fp8")


def test_stated_peaks_come_from_the_environment_and_bad_values_say_what_to_give(monkeypatch):
    monkeypatch.setenv("TFBERT_MATMUL_PEAKS", "600,1500")
    assert peaks_from_environment().ratio == 2.5
    monkeypatch.setenv("TFBERT_MATMUL_PEAKS", "fast")
    with pytest.raises(ValueError, match="two GFLOP/s numbers, float32 then bfloat16"):
        peaks_from_environment()


def test_auto_keeps_float32_on_a_cpu_for_models_too_narrow_to_gain_from_bf16(monkeypatch):
    monkeypatch.setenv("TFBERT_CPU_BF16", AMX)
    narrow = pick_precision(CPU, "auto", hidden_size=256)
    assert narrow.describe() == ("precision: float32 (CPU bfloat16 instructions avx512_bf16, amx_bf16, amx_tile "
                                 "(stated by TFBERT_CPU_BF16), but hidden size 256 < 512: matmuls too narrow to "
                                 "gain on a CPU)")
    assert pick_precision(CPU, "auto", hidden_size=512).policy == "mixed_bfloat16"
    assert pick_precision(CPU, "bf16", hidden_size=128).policy == "mixed_bfloat16"


@pytest.mark.parametrize("kind, capability, scaling, policy", [
    ("tpu", None, False, "mixed_bfloat16"), ("gpu", (8, 0), False, "mixed_bfloat16"),
    ("gpu", (9, 0), True, "mixed_bfloat16"), ("gpu", (7, 5), False, "float32"), ("gpu", (7, 5), True, "mixed_float16"),
    ("gpu", None, False, "float32"), ("cpu", None, False, "float32")])
def test_precision_for_devices_needs_no_strategy(kind, capability, scaling, policy):
    assert precision_for_devices(kind, "auto", None, capability, loss_scaling=scaling).policy == policy
    assert precision_for_devices(kind, "fp32", 1024, capability).describe() == "precision: float32 (requested)"


def test_precision_for_devices_refuses_unknown_kinds_and_precisions():
    with pytest.raises(ValueError, match="Unknown device kind 'npu'"):
        precision_for_devices("npu")
    with pytest.raises(ValueError, match="Unknown precision 'fp8'"):
        precision_for_devices("cpu", "fp8")


def test_the_precision_module_imports_neither_tensorflow_nor_keras():
    code = ("import sys; from tfbert.distribute.precision import precision_for_devices; "
            "print(precision_for_devices('tpu').policy, sorted({'tensorflow', 'keras', 'jax'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "mixed_bfloat16 []"


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
