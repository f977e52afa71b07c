"""`tfbert info`: versions, devices, the accelerator route, matmul peaks and the precision `auto` picks, the
strategy, the architectures."""

from __future__ import annotations

import argparse
import importlib.metadata

import tfbert
from tfbert import accelerators, architectures
from tfbert.commands import add_command
from tfbert.commands.errors import CommandError, one_line
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.distribute.peaks import (PEAKS_VARIABLE, cpu_bf16_flags, describe_cpu_bf16, measure_jax_peaks,
                                     measure_matmul_peaks, peaks_from_environment)
from tfbert.distribute.precision import pick_precision


def run(args: argparse.Namespace) -> None:
    """Prints the versions, one line per device kind, the accelerators and their route, the `auto` strategy and
    the registered architectures."""
    # Before TensorFlow's import here: with a libtpu it cannot load, that import aborts the process.
    route, tensorflow_sighting = accelerators.report()
    if tensorflow_sighting is not None and tensorflow_sighting.problem:
        print(route)
        raise CommandError(f"TensorFlow cannot start in this environment: {tensorflow_sighting.problem}; "
                           f"install a route ({accelerators.ROUTES_SECTION})")
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.distribute`'s strategies import TensorFlow, kept out of `tfbert --help`
    import keras
    import tensorflow as tf
    import tensorflow_text

    from tfbert.distribute import describe_strategy, resolve_strategy

    print(f"tfbert {tfbert.__version__}, TensorFlow {tf.__version__}, TF-Text {tensorflow_text.__version__}, "
          f"Keras {keras.__version__} ({keras.backend.backend()} backend){_jax_version()}")
    for kind in ("TPU", "GPU", "CPU"):
        devices = tf.config.list_logical_devices(kind)
        print(f"{kind}: {len(devices)} {'(' + ', '.join(d.name for d in devices) + ')' if devices else ''}".rstrip())
    print(route)
    try:
        strategy = resolve_strategy("auto")
        print(f"strategy auto: {describe_strategy(strategy)}")
    except ValueError as error:   # a TPU TensorFlow cannot reach (the JAX route's TPU VMs): the route says why
        strategy = resolve_strategy("cpu")
        print(f"strategy auto: fails here, so the precision below is the CPU's: {one_line(error)[:300]}")
    show_peaks_and_precision(strategy)
    print(f"architectures: {', '.join(architectures.names())}")


def _jax_version() -> str:
    """", JAX 0.10.2" where JAX is installed (read from its metadata: JAX is not imported), else ""."""
    try:
        return f", JAX {importlib.metadata.version('jax')}"
    except importlib.metadata.PackageNotFoundError:
        return ""


def show_peaks_and_precision(strategy) -> None:
    """Prints the matmul peaks (measured with TensorFlow, and JAX where installed; or stated by
    `TFBERT_MATMUL_PEAKS`), the CPU's bfloat16 instructions and what `--precision auto` picks."""
    stated = peaks_from_environment()
    if stated is not None:
        print(f"matmul peak (stated by {PEAKS_VARIABLE}, not measured): {stated.describe()}")
    else:
        for measured in (measure_matmul_peaks(), measure_jax_peaks()):
            if measured is not None:
                print(f"matmul peak ({measured.framework}, {measured.device}): {measured.describe()}")
    print(describe_cpu_bf16(cpu_bf16_flags()))
    choice = pick_precision(strategy)   # from the hardware, not from the peaks above
    print(f"--precision auto: {choice.policy} ({choice.reason})")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `info` subcommand to `tfbert`'s subparsers."""
    parser = add_command(
        commands, "info", "versions, devices, the accelerator route, matmul peaks, and what 'auto' picks",
        "Print the versions of tfbert, TensorFlow, TF-Text, Keras and JAX, the TPUs, GPUs and CPUs TensorFlow sees, "
        "the accelerators attached (/dev/accel*, /dev/vfio/*, /dev/nvidia*, TPU_NAME, TPU_ACCELERATOR_TYPE), "
        "the chips TensorFlow and JAX each see there and the route to take (TensorFlow, or --backend jax), "
        "the backend --backend auto picks, the distribution strategy that --strategy auto picks on this machine, "
        "the float32 and bfloat16 matmul peaks it measures (about 1-2 s; TensorFlow, and JAX where installed), "
        "the CPU's bfloat16 instructions, the precision --precision auto picks, and the architectures tfbert knows.",
        "  tfbert info\n")
    parser.set_defaults(run=run)
    return parser
