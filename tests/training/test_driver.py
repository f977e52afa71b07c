"""The `train` driver: step accounting, checkpoints, resume after SIGKILL, XLA readiness, encoder hook."""

import json
import os
import signal
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from tfbert.training import train
from tfbert.training.backends.tensorflow_devices import resolve_jit_compile
from tfbert.training.driver import _fit_chunks
from tfbert.training.settings import CPU_XLA_MIN_STEPS

from processes import start_python

from .subprocess_runner import HELPERS_DIR, REPOSITORY_ROOT, python_env
from .toy_pretrainer import ToyPretrainer, toy_dataset_fn

TRAIN_SCRIPT = str(HELPERS_DIR / "train_toy_script.py")


def test_fit_chunks_cover_exactly_the_requested_steps():
    assert _fit_chunks(0, 2500, 1000) == [(0, 2, 1000), (2000, 1, 500)]
    assert _fit_chunks(2000, 3000, 1000) == [(2000, 1, 1000)]
    assert _fit_chunks(2500, 4200, 1000) == [(2500, 1, 500), (3000, 1, 1000), (4000, 1, 200)]
    assert _fit_chunks(3000, 3000, 1000) == []


def test_jit_compile_auto_is_on_for_a_single_device():
    assert resolve_jit_compile(tf.distribute.get_strategy()) is True
    assert resolve_jit_compile(tf.distribute.get_strategy(), False) is False
    assert resolve_jit_compile(tf.distribute.get_strategy(), steps=CPU_XLA_MIN_STEPS) is True


def test_jit_compile_auto_is_off_for_a_short_run_on_a_cpu_unless_asked_for():
    assert resolve_jit_compile(tf.distribute.get_strategy(), steps=CPU_XLA_MIN_STEPS - 1) is False
    assert resolve_jit_compile(tf.distribute.OneDeviceStrategy("/cpu:0"), steps=2) is False
    assert resolve_jit_compile(tf.distribute.get_strategy(), True, steps=2) is True


def test_trains_exact_steps_checkpoints_and_exports_encoder(tmp_path):
    model = train(
        ToyPretrainer,
        toy_dataset_fn,
        model_dir=str(tmp_path),
        steps=7,
        global_batch_size=8,
        strategy=tf.distribute.get_strategy(),
        optimizer_recipe="bert",
        checkpoint_every=3,
        seed=1,
        verbose=0,
    )
    assert int(model.optimizer.iterations.numpy()) == 7
    assert model.jit_compile is False   # auto: 7 steps on a CPU do not win back a compile
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-7")
    assert {"ckpt-3.index", "ckpt-6.index", "ckpt-7.index"} <= set(os.listdir(tmp_path))
    assert model.encoder_saved_to == str(tmp_path / "encoder")
    assert (tmp_path / "encoder" / "token_embedding.npy").exists()
    assert list((tmp_path / "logs" / "train").glob("events.out.tfevents.*")), "no TensorBoard summaries"

    again = train(
        ToyPretrainer,
        toy_dataset_fn,
        model_dir=str(tmp_path),
        steps=7,
        global_batch_size=8,
        strategy=tf.distribute.get_strategy(),
        checkpoint_every=3,
        verbose=0,
    )
    assert int(again.optimizer.iterations.numpy()) == 7  # restored, nothing left to train
    for before, after in zip(model.weights, again.weights):
        np.testing.assert_array_equal(before.numpy(), after.numpy())


def test_argument_errors(tmp_path):
    common = dict(model_dir=str(tmp_path), global_batch_size=8, strategy=tf.distribute.get_strategy())
    with pytest.raises(ValueError, match="multiples of steps_per_execution=4"):
        train(ToyPretrainer, toy_dataset_fn, steps=10, checkpoint_every=8, steps_per_execution=4, **common)
    with pytest.raises(ValueError, match="multiples of gradient_accumulation_steps"):
        train(ToyPretrainer, toy_dataset_fn, steps=9, checkpoint_every=3, gradient_accumulation_steps=2, **common)


def test_one_training_step_compiles_with_xla_on_static_shapes():
    """TPU readiness: fixed batch shapes, drop_remainder, and a train step XLA accepts on the CPU."""
    dataset = toy_dataset_fn(4)
    for spec in dataset.element_spec.values():
        assert spec.shape.is_fully_defined(), spec
    keras.utils.set_random_seed(0)
    model = ToyPretrainer()
    model.compile(optimizer=keras.optimizers.AdamW(1e-3), jit_compile=True, steps_per_execution=2)
    history = model.fit(dataset, steps_per_epoch=2, epochs=1, verbose=0, shuffle=False)
    assert np.isfinite(history.history["mlm_loss"][0])
    assert int(model.optimizer.iterations.numpy()) == 2


def _start_training(options):
    return start_python(TRAIN_SCRIPT, json.dumps(options), cwd=REPOSITORY_ROOT, env=python_env())


def _finish(process, timeout):
    ended = process.ended(timeout)
    assert ended.status == 0, ended.stderr[-4000:]
    return json.loads(ended.stdout.strip().splitlines()[-1])


def _wait_for_checkpoint(directory, process, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if tf.train.latest_checkpoint(directory) is not None:
            return
        if process.poll() is not None:
            raise AssertionError(f"training exited early: {process.ended().stderr[-4000:]}")
        time.sleep(0.05)
    raise AssertionError("no checkpoint appeared")


def _checkpoints_are_complete(directory):
    state = tf.train.get_checkpoint_state(directory)
    for prefix in state.all_model_checkpoint_paths:
        reader = tf.train.load_checkpoint(prefix)  # fails on a half-written checkpoint
        assert reader.get_variable_to_shape_map()


def test_resume_after_sigkill_matches_an_uninterrupted_run(tmp_path):
    killed_dir, clean_dir = str(tmp_path / "killed"), str(tmp_path / "clean")
    options = dict(steps=40, checkpoint_every=10)
    victim = _start_training({**options, "model_dir": killed_dir, "sleep": 0.05})
    reference = _start_training({**options, "model_dir": clean_dir, "weights_out": str(tmp_path / "clean.npz")})
    try:
        _wait_for_checkpoint(killed_dir, victim)
        time.sleep(0.3)  # into the next interval, possibly in the middle of a save
        victim.send_signal(signal.SIGKILL)
        assert victim.ended(timeout_s=30).status == -signal.SIGKILL
    finally:
        victim.send_signal(signal.SIGKILL)   # nothing once it has ended
    killed_at = tf.train.latest_checkpoint(killed_dir)
    assert killed_at is not None and not killed_at.endswith("ckpt-40")
    _checkpoints_are_complete(killed_dir)

    resumed = _finish(
        _start_training({**options, "model_dir": killed_dir, "weights_out": str(tmp_path / "resumed.npz")}),
        timeout=180,
    )
    uninterrupted = _finish(reference, timeout=180)
    assert resumed["iterations"] == uninterrupted["iterations"] == 40
    assert resumed["momentum_norm"] == pytest.approx(uninterrupted["momentum_norm"], rel=1e-4)
    assert tf.train.latest_checkpoint(killed_dir).endswith("ckpt-40")
    _checkpoints_are_complete(killed_dir)
    resumed_weights, clean_weights = np.load(tmp_path / "resumed.npz"), np.load(tmp_path / "clean.npz")
    for name in clean_weights.files:
        np.testing.assert_allclose(resumed_weights[name], clean_weights[name], rtol=1e-5, atol=1e-6)
