"""The `tfbert` command line.

    tfbert configs                                   # shipped configs with parameter counts
    tfbert convert huggingface CHECKPOINT_DIR -o model.keras [--heads]
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence


class CommandError(Exception):
    """A user-facing failure: printed as one line, exit status 2, no traceback."""


def _quiet_tensorflow() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def run_configs(args: argparse.Namespace) -> None:
    _quiet_tensorflow()
    from tfbert.config import available_configs, load_config
    from tfbert.models.encoder import build_encoder

    rows = []
    for name in available_configs():
        config = load_config(name)
        encoder = config.encoder
        rows.append((name, config.architecture, encoder.num_layers, encoder.hidden_size, encoder.embedding_size,
                     encoder.sharing, build_encoder(encoder).count_params()))
    print(f"{'config':<16}{'arch':<8}{'L':>4}{'H':>6}{'E':>6}  {'sharing':<9}{'parameters':>14}")
    for name, arch, layers, hidden, embedding, sharing, count in rows:
        print(f"{name:<16}{arch:<8}{layers:>4}{hidden:>6}{embedding:>6}  {sharing:<9}{count:>14,}")


def run_convert(args: argparse.Namespace) -> None:
    _quiet_tensorflow()
    from tfbert.convert.huggingface import load_huggingface

    if not args.output.endswith(".keras"):
        raise CommandError(f"--output {args.output!r} must end with .keras")
    try:
        model = load_huggingface(args.checkpoint, heads=args.heads)
    except (FileNotFoundError, ValueError, ImportError) as error:
        raise CommandError(str(error)) from None
    model.save(args.output)
    print(f"wrote {args.output}: {type(model).__name__} with {model.count_params():,} parameters")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tfbert", description="BERT-family encoders for TensorFlow and Keras.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    configs = commands.add_parser("configs", help="list the shipped configs with their parameter counts")
    configs.set_defaults(run=run_configs)

    convert = commands.add_parser("convert", help="convert a checkpoint from another library into a .keras file")
    convert.add_argument("source", choices=["huggingface"], help="the checkpoint's library")
    convert.add_argument("checkpoint", help="folder with config.json and model.safetensors or pytorch_model.bin")
    convert.add_argument("-o", "--output", required=True, help="the .keras file to write")
    convert.add_argument("--heads", action="store_true", help="keep the pretraining heads (MLM and NSP/SOP)")
    convert.set_defaults(run=run_convert)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except CommandError as error:
        print(f"tfbert {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
