"""`tfbert info`: versions, the devices TensorFlow sees, the strategy `auto` picks, the architectures."""

from __future__ import annotations

import argparse

from tfbert.commands import add_command
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly


def run(args: argparse.Namespace) -> None:
    """Prints the versions, one line per device kind, the `auto` strategy and the registered architectures."""
    import_tensorflow_quietly()
    import keras
    import tensorflow as tf
    import tensorflow_text

    import tfbert
    from tfbert import architectures
    from tfbert.distribute import describe_strategy, resolve_strategy

    print(f"tfbert {tfbert.__version__}, TensorFlow {tf.__version__}, TF-Text {tensorflow_text.__version__}, "
          f"Keras {keras.__version__} ({keras.backend.backend()} backend)")
    for kind in ("TPU", "GPU", "CPU"):
        devices = tf.config.list_logical_devices(kind)
        print(f"{kind}: {len(devices)} {'(' + ', '.join(d.name for d in devices) + ')' if devices else ''}".rstrip())
    print(f"strategy auto: {describe_strategy(resolve_strategy('auto'))}")
    print(f"architectures: {', '.join(architectures.names())}")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `info` subcommand to `tfbert`'s subparsers."""
    parser = add_command(
        commands, "info", "versions, devices and the strategy 'auto' would pick",
        "Print the versions of tfbert, TensorFlow, TF-Text and Keras, the TPUs, GPUs and CPUs TensorFlow sees, "
        "the distribution strategy that --strategy auto picks on this machine, and the architectures tfbert knows.",
        "  tfbert info\n")
    parser.set_defaults(run=run)
    return parser
