"""Run the input pipeline on a tf.data service cluster: a dispatcher and CPU workers.

The trainer builds its pipeline as usual (reading, tokenizing, packing, masking: all graph
ops) and hands it to `distributed(dataset, "grpc://HOST:PORT")`; the workers run it and
stream finished batches back, so the trainer's hosts (a TPU pod's, say) only train.

Sharding is `ShardingPolicy.DYNAMIC`: the dispatcher hands the pipeline's source splits (the
corpus files, one at a time) to whichever worker asks next. Each file is read by one worker
per epoch, so no example comes twice in an epoch; a slow worker simply takes fewer files;
workers may join or leave during the run (preemptible CPUs) without a fixed worker list,
which the static policies (`FILE`, `DATA`) need. A corpus should therefore come as at
least a few files per worker (`split -n l/64 corpus.txt part-`). Every trainer input
pipeline joins the same job, so several trainer hosts share the epoch instead of
repeating it. What the policy gives up: after a worker fails, the split it held is not
replayed in that epoch (at most once, not exactly once).

Start a cluster (`python -m tfbert.data.service --help`):

    python -m tfbert.data.service dispatcher --port 5050
    python -m tfbert.data.service worker --dispatcher dispatcher-host:5050 --port 5051

Example (a dispatcher and a worker in this process; on a cluster they run on other machines):
    >>> dispatcher = start_dispatcher(0)
    >>> worker = start_worker(dispatcher.target)
    >>> served = distributed(tf.data.Dataset.range(4), dispatcher.target)
    >>> " ".join(str(value) for value in sorted(served.as_numpy_iterator()))
    '0 1 2 3'
    >>> worker.stop(); dispatcher.stop()
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Sequence

import tensorflow as tf

SHARDING = tf.data.experimental.service.ShardingPolicy.DYNAMIC
JOB_NAME = "tfbert-pretrain"
_ADDRESS = re.compile(r"(grpc://)?[^\s:/]+:\d{1,5}")


def check_address(address: str) -> str:
    """`grpc://HOST:PORT` (a missing `grpc://` is added); `ValueError` naming the form for anything else.

    >>> check_address("localhost:5050")
    'grpc://localhost:5050'
    """
    if not _ADDRESS.fullmatch(address or ""):
        raise ValueError(f"data service address {address!r} is not grpc://HOST:PORT (the dispatcher's; start one "
                         "with: python -m tfbert.data.service dispatcher --port PORT)")
    return address if address.startswith("grpc://") else f"grpc://{address}"


def distributed(dataset: tf.data.Dataset, address: str, job_name: str = JOB_NAME) -> tf.data.Dataset:
    """`dataset` produced by the tf.data service at `address`, dynamically sharded (see the module docstring).

    It registers the dataset with the dispatcher at once, so the dispatcher must be running (the module
    docstring's example starts one).
    """
    return dataset.apply(tf.data.experimental.service.distribute(
        processing_mode=SHARDING, service=check_address(address), job_name=job_name))


def start_dispatcher(port: int = 5050, work_dir: str | None = None) -> tf.data.experimental.service.DispatchServer:
    """A dispatcher listening on `port`; with `work_dir` (a shared folder, e.g. gs://) it survives restarts.

    >>> dispatcher = start_dispatcher(0)   # any free port
    >>> dispatcher.target.startswith("grpc://localhost:")
    True
    >>> dispatcher.stop()
    """
    config = tf.data.experimental.service.DispatcherConfig(
        port=port, work_dir=work_dir, fault_tolerant_mode=work_dir is not None)
    return tf.data.experimental.service.DispatchServer(config)


def start_worker(dispatcher: str, port: int = 0, worker_address: str | None = None
                 ) -> tf.data.experimental.service.WorkerServer:
    """A worker serving the dispatcher at `dispatcher` (`HOST:PORT`) on `port` (0: any free one).

    `worker_address` is how the trainers reach this worker (`HOST:%port%`; default: localhost).
    tfbert's text ops are registered first, so the worker can run any tfbert tokenizer.

    >>> dispatcher = start_dispatcher(0)
    >>> worker = start_worker(dispatcher.target)   # registers with the dispatcher
    >>> worker.stop(); dispatcher.stop()
    """
    import tfbert.text  # noqa: F401  registers tensorflow_text's ops, which the pipelines use

    address = check_address(dispatcher).removeprefix("grpc://")
    options = {"worker_address": worker_address} if worker_address else {}
    config = tf.data.experimental.service.WorkerConfig(dispatcher_address=address, port=port, **options)
    return tf.data.experimental.service.WorkerServer(config)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m tfbert.data.service dispatcher|worker ...`: serve until stopped (Ctrl-C)."""
    parser = argparse.ArgumentParser(prog="python -m tfbert.data.service",
                                     description="Start a tf.data service dispatcher or worker for tfbert pretrain "
                                                 "--data-service grpc://DISPATCHER_HOST:PORT.")
    roles = parser.add_subparsers(dest="role", required=True)
    dispatcher = roles.add_parser("dispatcher", help="the one dispatcher of the cluster")
    dispatcher.add_argument("--port", type=int, default=5050)
    dispatcher.add_argument("--work-dir", help="shared folder for the dispatcher's journal (fault tolerance)")
    worker = roles.add_parser("worker", help="a worker; start as many as the trainers need")
    worker.add_argument("--dispatcher", required=True, help="the dispatcher's HOST:PORT")
    worker.add_argument("--port", type=int, default=5051)
    worker.add_argument("--address", help="HOST:%%port%% the trainers reach this worker at (default: localhost)")
    args = parser.parse_args(argv)
    if args.role == "dispatcher":
        server = start_dispatcher(args.port, args.work_dir)
        print(f"dispatcher at {server.target}", flush=True)
    else:
        try:
            server = start_worker(args.dispatcher, args.port, args.address)
        except ValueError as error:
            print(f"python -m tfbert.data.service: error: {error}", file=sys.stderr)
            return 2
        print(f"worker on port {args.port}, serving {args.dispatcher}", flush=True)
    try:
        server.join()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
