"""`--backend auto|tensorflow|jax`, `--mesh DATAxMODEL` and the multi-host flags of the training commands.

Keras reads its backend once, when it is imported, so `tfbert.cli.main` calls `select_backend` right after parsing,
before any command imports Keras: it sets `KERAS_BACKEND` for the backend `--backend` names (`auto`:
`tfbert.accelerators.resolve_backend`). A process that already loaded Keras on another backend (a Python caller of
`tfbert.cli.main`, a test's forked server) runs the command again in a new interpreter when it is the `tfbert`
program, and is refused otherwise.

    >>> parser = argparse.ArgumentParser(prog="tfbert pretrain")
    >>> add_backend_arguments(parser)
    >>> parser.parse_args(["--backend", "jax", "--mesh", "2x4"]).mesh
    '2x4'
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Sequence

from tfbert.accelerators import resolve_backend
from tfbert.commands import flag_types
from tfbert.commands.errors import CommandError

BACKENDS = ("auto", "tensorflow", "jax")
MESH = re.compile(r"^([1-9]\d*)x([1-9]\d*)$")
# `keras.distribution.initialize` reads these (tfbert.training.backends.jax_devices.initialize_processes).
PROCESS_FLAGS = {"coordinator": "KERAS_DISTRIBUTION_JOB_ADDRESSES", "num_processes": "KERAS_DISTRIBUTION_NUM_PROCESSES",
                 "process_id": "KERAS_DISTRIBUTION_PROCESS_ID"}


def mesh_value(text: str) -> str:
    """`DATAxMODEL`, two positive whole numbers (`2x4`)."""
    if not MESH.match(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not DATAxMODEL, two positive whole numbers such as 2x4")
    return text


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds `--strategy`, `--backend`, `--mesh`, `--coordinator`, `--num-processes` and `--process-id`."""
    parser.add_argument("--strategy", default="auto", choices=["auto", "tpu", "gpu", "cpu", "multiworker"],
                        help="TensorFlow backend: the tf.distribute strategy (auto: a TPU, else every GPU, else "
                             "the CPU)")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="the trainer: tensorflow (tf.distribute: --strategy), jax (Keras' JAX trainer under "
                             "keras.distribution: TPU v5e/v5p/v6e, GPUs, CPU); auto: KERAS_BACKEND where set, JAX "
                             "where only JAX sees the accelerator, else tensorflow")
    parser.add_argument("--mesh", type=mesh_value, metavar="DATAxMODEL",
                        help="JAX: a device mesh, e.g. 2x4 (2-way data, 4-way model parallel: the family's layout "
                             "shards the token table, attention and feed-forward kernels); default: data parallel "
                             "over every device")
    parser.add_argument("--coordinator", metavar="HOST:PORT",
                        help="JAX on several hosts: process 0's address; with --num-processes and --process-id "
                             "(a Cloud TPU pod slice needs none of them)")
    parser.add_argument("--num-processes", type=flag_types.positive_int, help="JAX on several hosts: how many")
    parser.add_argument("--process-id", type=flag_types.non_negative_int,
                        help="JAX on several hosts: this one's, 0 to --num-processes - 1 (0 writes the run folder)")


def select_backend(args: argparse.Namespace, argv: Sequence[str] | None, exiting: bool) -> None:
    """Resolves `args.backend` and loads Keras on it (`KERAS_BACKEND`), or reruns the program (see the module)."""
    try:
        backend = resolve_backend(args.backend)
    except ValueError as error:
        raise CommandError(str(error)) from None
    _check_jax_flags(args, backend)
    args.backend = backend
    for flag, variable in PROCESS_FLAGS.items():
        if getattr(args, flag, None) is not None:
            os.environ[variable] = str(getattr(args, flag))
    keras = sys.modules.get("keras")
    if keras is None:
        os.environ["KERAS_BACKEND"] = backend
        return
    loaded = keras.backend.backend()
    if loaded == backend:
        return
    if not exiting:
        raise CommandError(f"--backend {backend}: this process already loaded Keras on {loaded}; run the command as "
                           f"`tfbert ...`, or set KERAS_BACKEND={backend} before Keras is imported")
    _rerun_with(backend, sys.argv[1:] if argv is None else list(argv))


def _check_jax_flags(args: argparse.Namespace, backend: str) -> None:
    given = [flag for flag in ("mesh", *PROCESS_FLAGS) if getattr(args, flag, None) is not None]
    if given and backend != "jax":
        names = ", ".join(f"--{flag.replace('_', '-')}" for flag in given)
        raise CommandError(f"{names}: JAX's (keras.distribution), but this run trains on {backend}; add --backend jax")
    processes = [getattr(args, flag, None) for flag in PROCESS_FLAGS]
    if any(value is not None for value in processes) and any(value is None for value in processes):
        raise CommandError("--coordinator, --num-processes and --process-id go together: give all three")
    if processes[1] is not None and processes[2] >= processes[1]:
        raise CommandError(f"--process-id {processes[2]} is not below --num-processes {processes[1]}")


def _rerun_with(backend: str, argv: list[str]) -> None:
    """Replaces this process by `python -m tfbert.cli ARGV` with Keras on `backend` (the same pid: signals reach it)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "tfbert.cli", *argv], {**os.environ, "KERAS_BACKEND": backend})
