"""`tfbert configs`: the configs the registered families ship, with architecture, sizes and encoder parameter counts."""

from __future__ import annotations

import argparse

from tfbert import architectures
from tfbert.commands import add_command
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly


def run(args: argparse.Namespace) -> None:
    """Prints one row per shipped config (of `--architecture`, when given)."""
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.config` imports PyYAML, kept out of `tfbert --help`
    from tfbert.config import available_configs, load_config
    from tfbert.models.parameters import count_encoder_parameters

    rows = []
    for name in available_configs():
        config = load_config(name)
        if args.architecture and config.architecture != args.architecture:
            continue
        encoder = config.encoder
        rows.append((name, config.architecture, encoder.num_layers, encoder.hidden_size, encoder.embedding_size,
                     encoder.sharing, count_encoder_parameters(encoder)))
    width = max((len(row[0]) for row in rows), default=6) + 2
    print(f"{'config':<{width}}{'arch':<10}{'L':>4}{'H':>6}{'E':>6}  {'sharing':<9}{'parameters':>14}")
    for name, arch, layers, hidden, embedding, sharing, count in rows:
        print(f"{name:<{width}}{arch:<10}{layers:>4}{hidden:>6}{embedding:>6}  {sharing:<9}{count:>14,}")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `configs` subcommand to `tfbert`'s subparsers."""
    parser = add_command(
        commands, "configs", "list the shipped configs with their encoders' parameter counts",
        "List the configs the registered families ship (names for --config; each family's in its package, an "
        "installed family's too) with the architecture, layers (L), hidden size "
        "(H), embedding size (E), cross-layer sharing and the encoder's parameter count.",
        "  tfbert configs\n  tfbert configs --architecture albert\n"
        "  tfbert pretrain --config albert_tiny ...   # a name from the list, or a YAML file\n")
    parser.add_argument("--architecture", choices=architectures.names(), help="only this architecture's configs")
    parser.set_defaults(run=run)
    return parser
