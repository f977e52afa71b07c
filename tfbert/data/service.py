"""Run the input pipeline on a tf.data service cluster: a dispatcher and CPU workers.

The trainer builds its pipeline as usual (reading, tokenizing, packing, masking: all graph
ops) and hands it to `distributed(dataset, "grpc://HOST:PORT")`; the workers run it and
stream finished batches back, so the trainer's hosts (a TPU pod's, say) only train.

Sharding is `ShardingPolicy.DYNAMIC`: the dispatcher hands the pipeline's source splits (the
corpus files, one at a time) to whichever worker asks next. Each file is read by one worker
per epoch, so no example comes twice in an epoch; a slow worker simply takes fewer files;
workers may join or leave during the run (preemptible CPUs) without a fixed worker list,
which the static policies (`FILE`, `DATA`) need. A corpus should therefore come as at
least a few files per worker (`split -n l/64 corpus.txt part-`). What the policy gives up:
after a worker fails, the split it held is not replayed in that epoch (at most once, not
exactly once).

Pipelines share an epoch only when they join one job: `distributed` gives each call a job
of its own unless `job_name` names one, and a pretraining run uses the job it recorded in
its folder (`run_job_name`), so two runs on one cluster never get each other's data. Before
anything waits on the cluster, `wait_for_service` checks within a bounded time (seconds in
`DISPATCHER_WAIT_S`, `WORKER_WAIT_S`) that a dispatcher answers and that a worker runs one
of TF-Text's ops, waiting in Python so that SIGINT and SIGTERM stop it.

Start a cluster (`python -m tfbert.data.service --help`):

    python -m tfbert.data.service dispatcher --port 5050
    python -m tfbert.data.service worker --dispatcher dispatcher-host:5050 --port 5051

Example (a dispatcher and a worker in this process; on a cluster they run on other machines):
    >>> import tensorflow as tf
    >>> dispatcher = start_dispatcher(0)
    >>> worker = start_worker(dispatcher.target)
    >>> served = distributed(tf.data.Dataset.range(4), dispatcher.target)
    >>> " ".join(str(value) for value in sorted(served.as_numpy_iterator()))
    '0 1 2 3'
    >>> worker.stop(); dispatcher.stop()
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import re
import socket
import sys
import threading
import time
import uuid
from typing import Iterator, Sequence

import tensorflow as tf

import tfbert.text  # noqa: F401  registers tensorflow_text's ops, which the pipelines use
from tfbert.interrupts import Interrupted, signals_raise
from tfbert.outputs import CHECKPOINT_INDEX, temporary_name

SHARDING = tf.data.experimental.service.ShardingPolicy.DYNAMIC
# How long a trainer (or a worker) tries to reach the dispatcher, then how long a trainer waits for a worker's
# first element, in seconds.
DISPATCHER_WAIT_S = 30.0
WORKER_WAIT_S = 60.0
# The file in a pretraining run's folder that names its tf.data service job, so a resumed run rejoins it.
JOB_FILE = "data_service_job.txt"
_JOB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_ADDRESS = re.compile(r"(grpc://)?([^\s:/]+):(\d{1,5})")
_MISSING_OP = re.compile(r"Op type not registered '([^']+)'")
_FROM_WORKER = re.compile(r"from worker (\S+?):? ")
COMMAND = "python -m tfbert.data.service"


class DataServiceError(ValueError):
    """The tf.data service cannot serve the pipeline: no dispatcher, no worker, a port taken, missing ops."""


def check_address(address: str) -> str:
    """`grpc://HOST:PORT` (a missing `grpc://` is added); `ValueError` naming the form for anything else.

    >>> check_address("localhost:5050")
    'grpc://localhost:5050'
    """
    match = _ADDRESS.fullmatch(address or "")
    if not match or not 1 <= int(match[3]) <= 65535:
        raise ValueError(f"data service address {address!r} is not grpc://HOST:PORT with a port from 1 to 65535 (the "
                         f"dispatcher's; start one with: {COMMAND} dispatcher --port PORT)")
    return address if address.startswith("grpc://") else f"grpc://{address}"


def _host_and_port(address: str) -> tuple[str, int]:
    match = _ADDRESS.fullmatch(check_address(address))
    return match[2], int(match[3])


def check_job_name(name: str, flag: str = "--data-service-job") -> str:
    """`name` if it is a job name tfbert accepts (letters, digits, `.`, `_`, `-`; up to 100); else `ValueError`."""
    if not isinstance(name, str) or not _JOB_NAME.fullmatch(name):
        raise ValueError(f"{flag} {name!r} is not a job name: use up to 100 letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit")
    return name


def new_job_name() -> str:
    """A job name no other pipeline has: `tfbert-` and 16 random hex digits."""
    return f"tfbert-{uuid.uuid4().hex[:16]}"


def run_job_name(model_dir: str) -> str:
    """The job of the pretraining run in `model_dir` (local or a bucket), recorded in its `JOB_FILE`.

    A run that has a checkpoint keeps the job it recorded, so its resumption rejoins the same job; a new
    run (a new folder, `--overwrite`, or one that never reached a checkpoint) records a new one.

    Example:
        >>> first = run_job_name("runs/new")
        >>> run_job_name("runs/new") == first   # no checkpoint yet: a new job
        False
        >>> open("runs/new/checkpoint", "w").close()   # as its first checkpoint writes it
        >>> run_job_name("runs/new") == run_job_name("runs/new")   # the run is resumed in its job
        True
    """
    folder = model_dir.rstrip("/")
    path = f"{folder}/{JOB_FILE}"
    if tf.io.gfile.exists(f"{folder}/{CHECKPOINT_INDEX}") and tf.io.gfile.exists(path):
        with tf.io.gfile.GFile(path, "r") as file:
            recorded = file.read().strip()
        if _JOB_NAME.fullmatch(recorded):
            return recorded
    name = new_job_name()
    if "://" in folder:
        tf.io.gfile.makedirs(folder)
        with tf.io.gfile.GFile(path, "w") as file:   # a bucket's objects are written whole
            file.write(name + "\n")
        return name
    os.makedirs(folder, exist_ok=True)
    staging = temporary_name(path)
    with open(staging, "w", encoding="utf-8") as file:
        file.write(name + "\n")
    os.replace(staging, path)
    return name


def reach_dispatcher(address: str, wait_s: float | None = None) -> None:
    """Returns once something listens at the dispatcher's `address`, trying for `wait_s` seconds
    (`DISPATCHER_WAIT_S`); else `DataServiceError`. A Python loop, so SIGINT and SIGTERM stop it."""
    host, port = _host_and_port(address)
    wait_s = DISPATCHER_WAIT_S if wait_s is None else wait_s
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with socket.create_connection((host, port), timeout=max(0.1, min(1.0, deadline - time.monotonic()))):
                return
        except OSError as error:
            if time.monotonic() >= deadline:
                reason = error.strerror or type(error).__name__
                raise DataServiceError(
                    f"no tf.data service dispatcher answers at {check_address(address)} ({reason}; tried for "
                    f"{wait_s:g} s): start one there with {COMMAND} dispatcher --port {port}, or give the address "
                    "of a running one") from None
        time.sleep(min(0.25, max(0.0, deadline - time.monotonic())))


def _probe_dataset() -> tf.data.Dataset:
    """One string through a TF-Text op, which a worker started without TF-Text's ops cannot run."""
    import tensorflow_text

    return tf.data.Dataset.from_tensors(tf.constant("probe")).map(
        lambda text: tensorflow_text.normalize_utf8(text, "NFC"))


def wait_for_service(address: str, wait_s: float | None = None, worker_wait_s: float | None = None) -> None:
    """Returns once the tf.data service at `address` serves a pipeline of tfbert's: its dispatcher answers
    (`reach_dispatcher`, `wait_s`) and a worker gives a first element within `worker_wait_s` seconds
    (`WORKER_WAIT_S`) of a probe job of its own. Else one-line `DataServiceError`: no dispatcher, no worker,
    or servers without TF-Text's ops. The wait is in Python (the probe runs in a thread), so signals stop it.

    Example:
        >>> dispatcher = start_dispatcher(0)
        >>> wait_for_service(dispatcher.target, worker_wait_s=1)
        Traceback (most recent call last):
        tfbert.data.service.DataServiceError: the tf.data service at grpc://localhost:... gave no data within 1 s: ...
        >>> dispatcher.stop()
    """
    address = check_address(address)
    reach_dispatcher(address, wait_s)
    started = time.monotonic()
    worker_wait_s = WORKER_WAIT_S if worker_wait_s is None else worker_wait_s
    found: list = []
    probe = threading.Thread(target=_first_element, args=(address, found), daemon=True, name="tfbert-service-probe")
    probe.start()
    probe.join(2.0)   # a working cluster answers at once; else say what the trainer waits for
    if probe.is_alive():
        print(f"note: waiting up to {worker_wait_s:g} s for a worker of the tf.data service at {address}",
              file=sys.stderr, flush=True)
    deadline = started + worker_wait_s
    while probe.is_alive() and time.monotonic() < deadline:
        probe.join(0.1)
    if probe.is_alive():
        host, port = _host_and_port(address)
        raise DataServiceError(f"the tf.data service at {address} gave no data within {worker_wait_s:g} s: no worker "
                               f"serves it; start one with {COMMAND} worker --dispatcher {host}:{port}")
    if isinstance(found[0], Exception):
        raise DataServiceError(service_error_message(found[0], address) or
                               f"the tf.data service at {address} failed: {_first_line(found[0])}") from None


def _first_element(address: str, found: list) -> None:
    """The probe thread: appends the probe job's first element, or the error it met, to `found`."""
    try:
        served = _probe_dataset().apply(tf.data.experimental.service.distribute(
            processing_mode=SHARDING, service=address, job_name=f"{new_job_name()}-probe"))
        found.append(next(iter(served)))
    except Exception as error:   # handed to the waiting thread, which names it
        found.append(error)


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def service_error_message(error: BaseException, address: str) -> str | None:
    """One line for an error a server without TF-Text's ops gives (`Op type not registered ...`); None for others."""
    missing = _MISSING_OP.search(str(error))
    if missing is None:
        return None
    worker = _FROM_WORKER.search(str(error))
    who = f"its worker {worker[1]}" if worker else "its dispatcher (or a worker)"
    return (f"the tf.data service at {address} cannot run tfbert's pipeline: {who} runs without TF-Text's ops (Op "
            f"type not registered '{missing[1]}'); start the dispatcher with {COMMAND} dispatcher and every worker "
            f"with {COMMAND} worker, which register them")


@contextlib.contextmanager
def named_service_errors(address: str | None) -> Iterator[None]:
    """Within the block, an error from servers without TF-Text's ops becomes a one-line `DataServiceError`
    (`service_error_message`); nothing changes when `address` is None (no tf.data service)."""
    try:
        yield
    except tf.errors.OpError as error:
        message = service_error_message(error, check_address(address)) if address is not None else None
        if message is None:
            raise
        raise DataServiceError(message) from None


def distributed(dataset: tf.data.Dataset, address: str, job_name: str | None = None,
                wait_s: float | None = None) -> tf.data.Dataset:
    """`dataset` produced by the tf.data service at `address`, dynamically sharded (see the module docstring).

    `job_name` (default: a new one, `new_job_name`) is the job the pipeline joins: pipelines that share one
    epoch (the trainer hosts of one run) give the same name. The dataset is registered with the dispatcher at
    once, so it must be running: `reach_dispatcher` checks for `wait_s` seconds first.
    """
    address = check_address(address)
    job_name = new_job_name() if job_name is None else check_job_name(job_name, "job_name")
    reach_dispatcher(address, wait_s)
    return dataset.apply(tf.data.experimental.service.distribute(
        processing_mode=SHARDING, service=address, job_name=job_name))


def check_port(port: int, flag: str = "--port", any_free: bool = True) -> int:
    """`port` if it is one a server can listen on (1 to 65535; 0, any free one, when `any_free`) and no other
    program listens there; else `DataServiceError`.

    TensorFlow's servers take a port they share with a server already listening there (gRPC sets
    SO_REUSEPORT), so a second dispatcher on a port in use would start and never be reached: the port is
    bound here first, without that option. Written by hand: TensorFlow has no such check.
    """
    low = 0 if any_free else 1
    if isinstance(port, bool) or not isinstance(port, int) or not low <= port <= 65535:
        raise DataServiceError(f"{flag} {port!r} is not a port: give a number from {low} to 65535"
                               + (" (0: any free port)" if any_free else ""))
    if port == 0:
        return port
    try:
        probe = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        everywhere = "::"
    except OSError:   # no IPv6 here
        probe, everywhere = socket.socket(socket.AF_INET, socket.SOCK_STREAM), "0.0.0.0"
    with probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as gRPC: a closed server's port is free
        try:
            probe.bind((everywhere, port))
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise DataServiceError(f"{flag} {port}: cannot listen there ({error.strerror}); give another "
                                       f"{flag}") from None
            raise DataServiceError(f"{flag} {port} is in use (another dispatcher, worker or program listens there); "
                                   f"give another {flag}, or stop that one") from None
    return port


def start_dispatcher(port: int = 5050, work_dir: str | None = None) -> tf.data.experimental.service.DispatchServer:
    """A dispatcher listening on `port` (0: any free one) on every interface; with `work_dir` (a shared folder,
    e.g. gs://) it survives restarts. A port in use is refused (`check_port`).

    TF-Text's ops are registered first: the dispatcher splits a dynamically sharded pipeline, so it reads
    the pipeline's graph, which holds the tokenizer's ops.

    >>> dispatcher = start_dispatcher(0)   # any free port
    >>> dispatcher.target.startswith("grpc://localhost:")
    True
    >>> dispatcher.stop()
    """
    check_port(port)
    config = tf.data.experimental.service.DispatcherConfig(
        port=port, work_dir=work_dir, fault_tolerant_mode=work_dir is not None)
    return tf.data.experimental.service.DispatchServer(config)


def start_worker(dispatcher: str, port: int = 0, worker_address: str | None = None,
                 wait_s: float | None = None) -> tf.data.experimental.service.WorkerServer:
    """A worker serving the dispatcher at `dispatcher` (`HOST:PORT`) on `port` (0: any free one).

    `worker_address` is how the trainers reach this worker (`HOST:%port%`; default: localhost).
    tfbert's text ops are registered first, so the worker can run any tfbert tokenizer. The dispatcher
    must answer within `wait_s` seconds (`reach_dispatcher`), and `port` be free (`check_port`).

    >>> dispatcher = start_dispatcher(0)
    >>> worker = start_worker(dispatcher.target)   # registers with the dispatcher
    >>> worker.stop(); dispatcher.stop()
    """
    address = check_address(dispatcher).removeprefix("grpc://")
    check_port(port)
    reach_dispatcher(address, wait_s)
    options = {"worker_address": worker_address} if worker_address else {}
    config = tf.data.experimental.service.WorkerConfig(dispatcher_address=address, port=port, **options)
    return tf.data.experimental.service.WorkerServer(config)


def _port(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give a number from 1 to 65535") from None


EVERY_INTERFACE = ("listens on every network interface: TensorFlow's servers take no bind address "
                   "(DispatcherConfig and WorkerConfig have a port only), so keep the port behind a firewall")


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m tfbert.data.service dispatcher|worker ...`: serve until stopped (Ctrl-C, SIGTERM)."""
    parser = argparse.ArgumentParser(prog=COMMAND,
                                     description="Start a tf.data service dispatcher or worker for tfbert pretrain "
                                                 f"--data-service grpc://DISPATCHER_HOST:PORT. Each {EVERY_INTERFACE}.")
    roles = parser.add_subparsers(dest="role", required=True)
    dispatcher = roles.add_parser("dispatcher", help="the one dispatcher of the cluster")
    dispatcher.add_argument("--port", type=_port, default=5050, help="1 to 65535 (default 5050); refused when in use")
    dispatcher.add_argument("--work-dir", help="shared folder for the dispatcher's journal (fault tolerance)")
    worker = roles.add_parser("worker", help="a worker; start as many as the trainers need")
    worker.add_argument("--dispatcher", required=True, help="the dispatcher's HOST:PORT")
    worker.add_argument("--port", type=_port, default=5051,
                        help="1 to 65535, or 0 for any free one (default 5051); refused when in use")
    worker.add_argument("--address", help="HOST:%%port%% the trainers reach this worker at (default: localhost)")
    args = parser.parse_args(argv)
    try:
        with signals_raise():
            if args.role == "dispatcher":
                check_port(args.port, any_free=False)
                server = start_dispatcher(args.port, args.work_dir)
                print(f"dispatcher at {server.target} (port {args.port} on every interface)", flush=True)
            else:
                server = start_worker(args.dispatcher, args.port, args.address)
                where = f"port {args.port}" if args.port else "a free port"
                print(f"worker on {where} (every interface), serving {check_address(args.dispatcher)}", flush=True)
            try:
                while True:   # not server.join(), which waits in C++ where no signal reaches Python
                    time.sleep(0.5)
            except Interrupted as interrupted:
                server.stop()
                print(f"{COMMAND} {args.role}: stopped by {interrupted}", file=sys.stderr)
    except (Interrupted, KeyboardInterrupt):
        return 0   # stopped while starting: nothing to stop
    except ValueError as error:
        print(f"{COMMAND} {args.role}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
