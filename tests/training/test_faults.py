"""Faults: a pretraining run killed with SIGKILL resumes from its last complete checkpoint and leaves no
temporary file; 8 threads calling one exported SavedModel get what one thread gets."""

import os
import signal

import numpy as np
import pytest
from processes import run_tfbert, signal_when, start_tfbert, write_tiny_run_inputs

pytestmark = pytest.mark.end_to_end

STEPS = 8


@pytest.fixture(scope="module")
def tiny_run_inputs(assets, tmp_path_factory):
    """A corpus of 5-sentence documents, a WordPiece vocabulary and a one-layer BERT config (YAML)."""
    return write_tiny_run_inputs(tmp_path_factory.mktemp("faults"), assets("text/botchan.txt"))


def pretrain_argv(folder, run):
    return ["pretrain", "--config", folder / "tiny.yaml", "--tokenizer", folder / "vocab", "--data",
            folder / "corpus.txt", "--model-dir", run, "--steps", STEPS, "--checkpoint-every", 1, "--batch-size", 2,
            "--sequence-length", 16, "--max-predictions", 2, "--shuffle-buffer", 0, "--strategy", "cpu", "--seed", 0]


def writing_a_later_checkpoint(run):
    """True once a checkpoint is being written after the first complete one (TensorFlow's `ckpt-N_temp/`), or
    step STEPS - 2 is checkpointed (no write caught)."""
    def ready() -> bool:
        names = os.listdir(run) if run.is_dir() else []
        written = "checkpoint" in names   # TensorFlow's index of complete checkpoints: one is done
        return written and (any(name.endswith("_temp") for name in names) or f"ckpt-{STEPS - 2}.index" in names)
    return ready


def encoder_equals_checkpoint(run) -> bool:
    """Every weight of encoder/encoder.keras equals a trainable variable of the newest checkpoint."""
    import keras
    import tensorflow as tf

    import tfbert.models.encoder  # noqa: F401  (registers Encoder for loading)

    latest = tf.train.latest_checkpoint(str(run))
    reader = tf.train.load_checkpoint(latest)
    saved = [reader.get_tensor(name) for name, _ in tf.train.list_variables(latest)
             if name.startswith("optimizer/_trainable_variables/")]
    encoder = keras.models.load_model(run / "encoder" / "encoder.keras")
    return all(any(value.shape == weight.shape and np.array_equal(value, weight) for value in saved)
               for weight in encoder.get_weights())


@pytest.mark.slow
def test_sigkilled_pretraining_resumes_from_its_last_complete_checkpoint(tiny_run_inputs, tmp_path):
    import tensorflow as tf

    run = tmp_path / "run"
    killed = signal_when(start_tfbert(pretrain_argv(tiny_run_inputs, run)), writing_a_later_checkpoint(run),
                         signal.SIGKILL)
    assert killed.status == -signal.SIGKILL
    last = tf.train.latest_checkpoint(str(run))
    step = int(last.rsplit("-", 1)[-1])
    assert 1 <= step < STEPS and os.path.exists(f"{last}.index")
    (run / "encoder").mkdir(exist_ok=True)
    (run / "encoder" / "encoder.keras").write_bytes(b"")   # as a kill while writing it used to leave

    resumed = run_tfbert(pretrain_argv(tiny_run_inputs, run))
    assert resumed.status == 0, resumed.stderr[-2000:]
    assert f"resumed from {last} at step {step} of {STEPS}" in resumed.stdout   # a resumed run says so
    assert f"trained to step {STEPS} of {STEPS}" in resumed.stdout
    assert tf.train.latest_checkpoint(str(run)).endswith(f"ckpt-{STEPS}")
    leftovers = [name for _, folders, files in os.walk(run) for name in folders + files
                 if name.endswith("_temp") or ".tfbert-tmp-" in name or name == ".tfbert.lock"]
    assert leftovers == []
    assert encoder_equals_checkpoint(run)


@pytest.mark.slow
def test_a_sigkilled_overwrite_run_gives_the_old_run_back_to_the_same_command_without_overwrite(tiny_run_inputs,
                                                                                                tmp_path):
    # The old run, set aside by --overwrite, was deleted by the rerun without --overwrite, which started at step 0.
    import tensorflow as tf

    run = tmp_path / "run"
    assert run_tfbert(pretrain_argv(tiny_run_inputs, run)).status == 0
    (run / "notes.txt").write_text("mine")
    old_checkpoint = tf.train.latest_checkpoint(str(run))

    def set_aside() -> bool:
        return any(name.startswith(".tfbert-tmp-") and name.endswith("-old-run") for name in os.listdir(tmp_path))

    killed = signal_when(start_tfbert([*pretrain_argv(tiny_run_inputs, run), "--overwrite"]), set_aside,
                         signal.SIGKILL)
    assert killed.status == -signal.SIGKILL and not (run / "checkpoint").exists()
    rerun = run_tfbert(pretrain_argv(tiny_run_inputs, run))
    assert rerun.status == 0, rerun.stderr[-2000:]
    assert f"note: {run} is back as it was" in rerun.stderr
    assert (run / "notes.txt").read_text() == "mine" and tf.train.latest_checkpoint(str(run)) == old_checkpoint
    assert f"trained to step {STEPS} of {STEPS}" in rerun.stdout
    assert [name for name in os.listdir(tmp_path) if name != "run"] == []
