"""The JAX trainer as a user runs it: `tfbert pretrain --backend jax` on two virtual CPU devices, killed with SIGKILL
after a checkpoint, resumed to the end; then the TensorFlow commands take the run (export serves the JAX model's
outputs, fine-tuning and the Hugging Face writer read it), and a two-process run on localhost trains with the
one-process losses."""

import json
import re
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from processes import run_tfbert, signal_when, start_tfbert, write_tiny_run_inputs
from .subprocess_runner import REPOSITORY_ROOT, python_env

from tfbert import artifacts

pytestmark = pytest.mark.end_to_end

STEPS = 6
TEXTS = ["the [MASK] of the school", "i was a [MASK] boy"]
JAX_ENV = {"KERAS_BACKEND": "jax", "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}


def pretrain_argv(folder, run, *extra):
    return ["pretrain", "--backend", "jax", "--config", folder / "tiny.yaml", "--tokenizer", folder / "vocab",
            "--data", folder / "corpus.txt", "--model-dir", run, "--steps", STEPS, "--checkpoint-every", 2,
            "--batch-size", 4, "--sequence-length", 32, "--max-predictions", 4, "--shuffle-buffer", 0, "--seed", 0,
            *extra]


@pytest.fixture(scope="module")
def jax_run(assets, tmp_path_factory):
    """A JAX run SIGKILLed once its first checkpoint is complete, then resumed to step STEPS: (inputs, run, its
    output and log)."""
    folder = write_tiny_run_inputs(tmp_path_factory.mktemp("jax"), assets("text/botchan.txt"))
    run = folder / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XLA_FLAGS", JAX_ENV["XLA_FLAGS"])
        killed = signal_when(start_tfbert(pretrain_argv(folder, run)), lambda: (run / "ckpt-2.weights.h5").exists(),
                             signal.SIGKILL)
        resumed = run_tfbert(pretrain_argv(folder, run))
    assert killed.status == -signal.SIGKILL
    assert resumed.status == 0, resumed.stderr[-3000:]
    return folder, run, resumed.stdout + resumed.stderr


def test_a_killed_jax_run_resumes_from_its_last_checkpoint_to_the_end(jax_run):
    _, run, output = jax_run
    resumed = re.search(r"resumed from \S+/ckpt-(\d+)\.weights\.h5 at step (\d+) of 6", output)
    assert resumed and resumed.group(1) == resumed.group(2) and int(resumed.group(1)) in (2, 4), output
    assert "step 6/6  loss" in output and "time to first step" in output
    assert sorted(path.name for path in run.glob("ckpt-*")) == ["ckpt-2.weights.h5", "ckpt-4.weights.h5",
                                                                "ckpt-6.weights.h5"]
    assert not list(run.glob(".tfbert-tmp-*"))
    artifact = artifacts.open(run)
    assert (artifact.kind, artifact.family, artifact.step) == ("pretraining-run", "bert", STEPS)


JAX_OUTPUTS = """
import json, sys
import numpy as np
from tfbert.artifacts.loading import load_pretraining_run
run, inputs = sys.argv[1], dict(np.load(sys.argv[2]))
model = load_pretraining_run(run)
encoded = model.encoder({name: inputs[name] for name in ("token_ids", "segment_ids", "padding_mask")})
logits = model(inputs)["mlm_logits"]
np.savez(sys.argv[3], sequence_output=np.asarray(encoded["sequence_output"]),
         pooled_output=np.asarray(encoded["pooled_output"]), mlm_logits=np.asarray(logits))
print(json.dumps({"backend": __import__("keras").backend.backend()}))
"""


def test_tensorflow_serves_the_jax_models_outputs(jax_run, tmp_path):
    """The export's encoder outputs, and the run's heads as TensorFlow reads them, are the JAX model's (1e-5)."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the SavedModel's tokenizer ops)

    from tfbert.artifacts.loading import load_pretraining_run

    _, run, _ = jax_run
    exported = run_tfbert(["export", run, "--name", "fill", "--output-dir", tmp_path / "saved"])
    assert exported.status == 0, exported.stderr[-3000:]
    loaded = tf.saved_model.load(str(artifacts.resolve_saved_model(tmp_path / "saved" / "fill")))
    packed = {key: value.numpy() for key, value in loaded.signatures["preprocess"](text=tf.constant(TEXTS)).items()}
    served = {key: value.numpy() for key, value in loaded.signatures["encode"](**packed).items()}
    inputs = {"token_ids": packed["input_word_ids"], "segment_ids": packed["input_type_ids"],
              "padding_mask": packed["input_mask"], "masked_positions": np.array([[1, 2, 3], [1, 2, 3]], np.int32)}
    np.savez(tmp_path / "inputs.npz", **inputs)
    script = tmp_path / "jax_outputs.py"
    script.write_text(JAX_OUTPUTS, encoding="utf-8")
    completed = subprocess.run([sys.executable, script, run, tmp_path / "inputs.npz", tmp_path / "jax.npz"],
                               cwd=REPOSITORY_ROOT, env=python_env(JAX_ENV), capture_output=True, text=True,
                               timeout=500)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == {"backend": "jax"}
    reference = np.load(tmp_path / "jax.npz")
    for name in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(served[name], reference[name], atol=1e-5)
    heads = load_pretraining_run(run)(inputs)["mlm_logits"]
    np.testing.assert_allclose(np.asarray(heads), reference["mlm_logits"], atol=1e-5)
    filled = loaded.signatures["serving_default"](text=tf.constant(["the [MASK] of the school"]))
    assert filled["token_ids"].shape[0] == 1 and np.isfinite(filled["scores"].numpy()).all()


def test_finetune_and_the_hugging_face_writer_take_a_jax_run(jax_run, tmp_path):
    folder, run, _ = jax_run
    train = tmp_path / "train.tsv"
    train.write_text("sentence\tlabel\na gripping film\t1\ndull and slow\t0\na joy to watch\t1\na waste of time\t0\n",
                     encoding="utf-8")
    tuned = run_tfbert(["finetune", "--pretrained", run, "--train", train, "--eval", train, "--model-dir",
                        tmp_path / "cls", "--epochs", "1", "--batch-size", "2", "--max-length", "16", "--seed", "0"])
    assert tuned.status == 0, tuned.stderr[-3000:]
    assert artifacts.open(tmp_path / "cls").kind == "model-dir"
    written = run_tfbert(["convert", "to-huggingface", run, "-o", tmp_path / "hf"])
    assert written.status == 0, written.stderr[-3000:]
    assert json.loads((tmp_path / "hf" / "config.json").read_text())["model_type"] == "bert"


TRAIN_ONE = """
import json, sys
import keras, tensorflow as tf
from tfbert import architectures
from tfbert.config import load_config
from tfbert.text import load_tokenizer
from tfbert.training.driver import train
from tfbert.training.pretraining_config import config_for_tokenizer
from tfbert.training.pretraining_inputs import ExampleSettings, document_pipeline

folder, run = sys.argv[1], sys.argv[2]
tokenizer = load_tokenizer(folder + "/vocab")
config = config_for_tokenizer(load_config(folder + "/tiny.yaml"), tokenizer)
config = config.replace(encoder=config.encoder.replace(dropout_rate=0.0, attention_dropout_rate=0.0))
settings = ExampleSettings(sequence_length=32, max_predictions=4, seed=0, shuffle_buffer=0)
objectives, pipeline = document_pipeline(config, tokenizer, [folder + "/corpus.txt"], settings)
rows = next(iter(pipeline(8, tf.distribute.InputContext())))   # 8 fixed examples, 2 steps of 4


def dataset_fn(batch_size, context):   # each process its own rows: p, p + 2, ...
    examples = tf.data.Dataset.from_tensor_slices(rows)
    examples = examples.shard(context.num_input_pipelines, context.input_pipeline_id)
    return examples.batch(batch_size, drop_remainder=True).repeat()


spec = architectures.get(config.architecture)
printer = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: print("LOSS", float(logs["loss"]),
                                                                                      flush=True))
train(lambda: spec.build_pretraining_model(config, objectives, seed=0), dataset_fn, model_dir=run, steps=2,
      batch_size=4, checkpoint_every=2, seed=0, verbose=0, callbacks=[printer], family=spec)
print(json.dumps({"processes": __import__("jax").process_count()}))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def losses(output: str) -> list[float]:
    return [float(line.split()[1]) for line in output.splitlines() if line.startswith("LOSS ")]


@pytest.mark.slow
def test_two_processes_on_localhost_train_with_the_one_process_losses(jax_run, tmp_path):
    """Each process has one CPU device and reads its own half of every batch (`keras.distribution.initialize`); one
    process on two devices reads the same rows in another order, so the losses agree to float rounding."""
    folder, _, _ = jax_run
    script = tmp_path / "train_one.py"
    script.write_text(TRAIN_ONE, encoding="utf-8")
    one_device = {"KERAS_BACKEND": "jax", "XLA_FLAGS": "--xla_force_host_platform_device_count=1",
                  "JAX_CPU_COLLECTIVES_IMPLEMENTATION": "gloo"}
    alone = subprocess.run([sys.executable, script, folder, tmp_path / "alone"], cwd=REPOSITORY_ROOT,
                           env=python_env({**one_device, "XLA_FLAGS": JAX_ENV["XLA_FLAGS"]}), capture_output=True,
                           text=True, timeout=300)
    assert alone.returncode == 0, alone.stderr[-3000:]
    address = f"127.0.0.1:{free_port()}"
    workers = [subprocess.Popen([sys.executable, script, folder, tmp_path / "pair"], cwd=REPOSITORY_ROOT,
                                env=python_env({**one_device, "KERAS_DISTRIBUTION_JOB_ADDRESSES": address,
                                                "KERAS_DISTRIBUTION_NUM_PROCESSES": "2",
                                                "KERAS_DISTRIBUTION_PROCESS_ID": str(index)}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for index in range(2)]
    deadline = time.monotonic() + 400   # under pytest's 600 s: a hang fails this test, not its worker
    try:
        outputs = [worker.communicate(timeout=max(1.0, deadline - time.monotonic())) for worker in workers]
    finally:
        for worker in workers:
            worker.kill()
    assert [worker.returncode for worker in workers] == [0, 0], outputs[0][1][-3000:] + outputs[1][1][-3000:]
    assert json.loads(outputs[0][0].strip().splitlines()[-1]) == {"processes": 2}
    np.testing.assert_allclose(losses(outputs[0][0]), losses(alone.stdout), atol=1e-5)
    assert (tmp_path / "pair" / "ckpt-2.weights.h5").is_file()
    assert (tmp_path / "pair" / "encoder" / "encoder.keras").is_file()
