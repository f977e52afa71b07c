"""The tf.data service: each run in a job of its own, a missing dispatcher or worker named within a stated time (and
a signal stopping the wait), servers without TF-Text's ops named, and the server command's ports checked."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest
import tensorflow as tf
from command_server import checkout_environment
from processes import signal_when, start_tfbert

from tfbert.cli import main
from tfbert.data import service
from tfbert.data.service import (DataServiceError, distributed, run_job_name, start_dispatcher, start_worker,
                                 wait_for_service)

SEQUENCE_LENGTH = 32


@pytest.fixture
def cluster():
    """A dispatcher and one worker in this process."""
    dispatcher = start_dispatcher(0)
    worker = start_worker(dispatcher.target)
    yield dispatcher
    worker.stop()
    dispatcher.stop()


@pytest.fixture
def lone_dispatcher():
    """A dispatcher with no worker."""
    dispatcher = start_dispatcher(0)
    yield dispatcher
    dispatcher.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def test_two_pipelines_on_one_dispatcher_get_their_own_data_and_one_job_shares_an_epoch(cluster):
    # Every pipeline joined the job "tfbert-pretrain": the second got the first one's elements.
    first = iter(distributed(tf.data.Dataset.range(0, 12), cluster.target))
    second = iter(distributed(tf.data.Dataset.range(100, 112), cluster.target))
    got = {0: [], 100: []}
    for _ in range(12):   # read in turns, both jobs under way at once
        got[0].append(int(next(first)))
        got[100].append(int(next(second)))
    assert sorted(got[0]) == list(range(12)) and sorted(got[100]) == list(range(100, 112))
    shared = [distributed(tf.data.Dataset.range(20), cluster.target, job_name="one-epoch") for _ in range(2)]
    values = [int(value) for pipeline in shared for value in pipeline]
    assert sorted(values) == list(range(20))   # one epoch between the two: each element once


def test_a_run_keeps_its_job_once_it_has_a_checkpoint_and_a_new_run_takes_a_new_one(tmp_path):
    run, other = tmp_path / "run", tmp_path / "other"
    first = run_job_name(str(run))
    assert (run / service.JOB_FILE).read_text().strip() == first
    assert run_job_name(str(run)) != first   # no checkpoint yet: nothing trained in that job, a new one
    (run / "checkpoint").write_text('model_checkpoint_path: "ckpt-2"\n')
    kept = (run / service.JOB_FILE).read_text().strip()
    assert run_job_name(str(run)) == kept == run_job_name(str(run))   # resumed: the same job
    assert run_job_name(str(other)) not in (first, kept)
    assert [name for name in os.listdir(run) if name.startswith(".tfbert-")] == []


def test_a_missing_dispatcher_is_named_within_the_stated_time_in_one_line():
    address = f"localhost:{free_port()}"
    for call in (lambda: wait_for_service(address, wait_s=1),
                 lambda: distributed(tf.data.Dataset.range(2), address, wait_s=1),
                 lambda: start_worker(address, wait_s=1)):   # a worker's start too (it retried for ever, silently)
        start = time.monotonic()
        with pytest.raises(DataServiceError) as refused:
            call()
        assert time.monotonic() - start < 5
        message = str(refused.value)
        assert f"no tf.data service dispatcher answers at grpc://{address}" in message and "\n" not in message
        assert "tried for 1 s" in message and "python -m tfbert.data.service dispatcher --port" in message


def test_a_dispatcher_without_workers_is_named_within_the_stated_time(lone_dispatcher):
    start = time.monotonic()
    with pytest.raises(DataServiceError, match="gave no data within 1 s: no worker serves it; start one with "
                                               "python -m tfbert.data.service worker --dispatcher localhost:"):
        wait_for_service(lone_dispatcher.target, worker_wait_s=1)
    assert time.monotonic() - start < 10


def test_a_worker_without_tf_text_ops_is_named_with_the_command_to_start_one(lone_dispatcher):
    # A worker started with TensorFlow's own servers (a fresh interpreter: no TF-Text) registers with the dispatcher.
    address = lone_dispatcher.target.removeprefix("grpc://")
    script = textwrap.dedent(f"""
        import tensorflow as tf
        config = tf.data.experimental.service.WorkerConfig(dispatcher_address={address!r})
        worker = tf.data.experimental.service.WorkerServer(config)
        print("serving", flush=True)
        worker.join()
    """)
    plain = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    try:
        assert plain.stdout.readline().strip() == "serving"
        with pytest.raises(DataServiceError) as refused:
            wait_for_service(lone_dispatcher.target, worker_wait_s=120)
    finally:
        plain.kill()
        plain.wait()
    message = str(refused.value)
    assert "runs without TF-Text's ops (Op type not registered 'NormalizeUTF8')" in message and "\n" not in message
    assert "its worker localhost:" in message and "python -m tfbert.data.service worker" in message


def test_an_op_missing_on_the_cluster_while_training_is_one_line_naming_the_worker_command():
    error = tf.errors.NotFoundError(None, None, "Failed to get element from worker vm-3:5051: Failed to get an "
                                                "element: Op type not registered 'FastBertNormalize' in binary "
                                                "running on vm-3. Make sure the Op and Kernel are registered")
    with pytest.raises(DataServiceError) as refused:
        with service.named_service_errors("d:5050"):
            raise error
    assert str(refused.value) == (
        "the tf.data service at grpc://d:5050 cannot run tfbert's pipeline: its worker vm-3:5051 runs without "
        "TF-Text's ops (Op type not registered 'FastBertNormalize'); start the dispatcher with python -m "
        "tfbert.data.service dispatcher and every worker with python -m tfbert.data.service worker, which register "
        "them")
    with pytest.raises(tf.errors.NotFoundError):   # another error stays as it was
        with service.named_service_errors("d:5050"):
            raise tf.errors.NotFoundError(None, None, "no such file")


@pytest.fixture(scope="module")
def tiny_pretraining(tmp_path_factory, assets):
    """A corpus, a one-layer config and the MiniLM vocabulary folder, for `tfbert pretrain` argv."""
    folder = tmp_path_factory.mktemp("service_run")
    lines = [line.strip() for line in open(assets("text/botchan.txt"), encoding="utf-8") if line.strip()][:80]
    (folder / "corpus.txt").write_text("\n\n".join("\n".join(lines[i:i + 8]) for i in range(0, 80, 8)) + "\n",
                                       encoding="utf-8")
    (folder / "tiny.yaml").write_text("architecture: bert\nencoder:\n  vocab_size: 30522\n  hidden_size: 16\n"
                                      "  num_layers: 1\n  num_heads: 2\n  intermediate_size: 32\n  max_positions: 32\n",
                                      encoding="utf-8")
    return folder, assets("minilm/vocab.txt").parent


def pretrain_argv(tiny_pretraining, run, address, *extra):
    folder, vocab = tiny_pretraining
    return ["pretrain", "--config", str(folder / "tiny.yaml"), "--tokenizer", str(vocab), "--data",
            str(folder / "corpus.txt"), "--model-dir", str(run), "--steps", "2", "--batch-size", "2",
            "--sequence-length", str(SEQUENCE_LENGTH), "--max-predictions", "4", "--strategy", "cpu",
            "--data-service", address, *extra]


def test_pretrain_without_a_dispatcher_fails_in_one_line_and_leaves_nothing(tiny_pretraining, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.setattr(service, "DISPATCHER_WAIT_S", 1.0)
    address = f"localhost:{free_port()}"
    assert main(pretrain_argv(tiny_pretraining, tmp_path / "run", address)) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"tfbert pretrain: error: no tf.data service dispatcher answers at grpc://{address}")
    assert "tried for 1 s" in error
    assert os.listdir(tmp_path) == []
    assert main(pretrain_argv(tiny_pretraining, tmp_path / "run", address)[:-2] + ["--data-service-job", "x"]) == 2
    assert "give the service's address too" in capsys.readouterr().err


def stderr_says(child, text: str):
    def ready() -> bool:
        return text in os.pread(child.stderr_file.fileno(), 1 << 20, 0).decode("utf-8", "replace")
    return ready


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_run_waiting_for_the_service(tiny_pretraining, tmp_path, lone_dispatcher, signal_number):
    # Waiting for a dispatcher (or a worker) went on in C++, where no signal reached Python: the run hung.
    run = tmp_path / "run"
    child = start_tfbert(pretrain_argv(tiny_pretraining, run, lone_dispatcher.target))
    ended = signal_when(child, stderr_says(child, "note: waiting up to 60 s for a worker"), signal_number,
                        deadline_s=300)
    assert ended.status == 128 + signal_number, ended.stderr[-3000:]
    assert ended.last_line.startswith(f"tfbert pretrain: interrupted by {signal.Signals(signal_number).name} ")
    assert os.listdir(tmp_path) == []


# --- python -m tfbert.data.service ----------------------------------------------------------------------------


def test_the_service_command_refuses_a_port_out_of_range_or_in_use(lone_dispatcher, capsys):
    taken = lone_dispatcher.target.rsplit(":", 1)[1]
    for role in (["dispatcher"], ["worker", "--dispatcher", lone_dispatcher.target]):
        assert service.main([*role, "--port", "99999"]) == 2
        assert capsys.readouterr().err.strip() == (f"python -m tfbert.data.service {role[0]}: error: --port 99999 is "
                                                   "not a port: give a number from " +
                                                   ("1 to 65535" if role[0] == "dispatcher" else
                                                    "0 to 65535 (0: any free port)"))
        assert service.main([*role, "--port", taken]) == 2
        assert capsys.readouterr().err.strip() == (f"python -m tfbert.data.service {role[0]}: error: --port {taken} "
                                                   "is in use (another dispatcher, worker or program listens there); "
                                                   "give another --port, or stop that one")
    with pytest.raises(DataServiceError, match="in use"):
        start_dispatcher(int(taken))


def test_the_service_command_keeps_tensorflow_start_up_lines_quiet(tmp_path):
    # `python -m tfbert.data.service` imported TensorFlow through tfbert.data, before anything could quiet it.
    ended = subprocess.run([sys.executable, "-m", "tfbert.data.service", "dispatcher", "--port", "99999"],
                           capture_output=True, text=True, env={**checkout_environment(), "TF_CPP_MIN_LOG_LEVEL": "3"},
                           cwd=tmp_path, timeout=300)
    assert ended.returncode == 2
    assert ended.stderr.strip().splitlines() == [
        "python -m tfbert.data.service dispatcher: error: --port 99999 is not a port: give a number from 1 to 65535"]
