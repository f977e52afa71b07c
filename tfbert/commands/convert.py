"""`tfbert convert`: a checkpoint from another library into a tfbert `.keras` file."""

from __future__ import annotations

import argparse

from tfbert.commands import add_command
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly


def run(args: argparse.Namespace) -> None:
    """Loads the checkpoint (with its heads on `--heads`) and saves the model to `--output`."""
    import_tensorflow_quietly()
    from tfbert.convert.huggingface import load_huggingface

    if not args.output.endswith(".keras"):
        raise CommandError(f"--output {args.output!r} must end with .keras")
    try:
        model = load_huggingface(args.checkpoint, heads=args.heads)
    except (FileNotFoundError, ValueError, ImportError) as error:
        raise CommandError(str(error)) from None
    model.save(args.output)
    print(f"wrote {args.output}: {type(model).__name__} with {model.count_params():,} parameters")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `convert` subcommand to `tfbert`'s subparsers."""
    from tfbert import architectures

    parser = add_command(
        commands, "convert", "convert a checkpoint from another library into a .keras file",
        f"Convert a Hugging Face checkpoint folder (config.json and model.safetensors or pytorch_model.bin; "
        f"model_type {', '.join(architectures.model_types('huggingface'))}) into a tfbert .keras file with the same outputs.",
        "  tfbert convert huggingface all-MiniLM-L6-v2/ -o minilm.keras\n"
        "  tfbert convert huggingface bert-base-uncased/ -o bert.keras --heads   # keep the MLM and NSP heads\n")
    parser.add_argument("source", choices=["huggingface"], help="the checkpoint's library")
    parser.add_argument("checkpoint", help="folder with config.json and model.safetensors or pytorch_model.bin")
    parser.add_argument("-o", "--output", required=True, help="the .keras file to write")
    parser.add_argument("--heads", action="store_true", help="keep the pretraining heads (MLM and NSP/SOP)")
    parser.set_defaults(run=run)
    return parser
