"""`tfbert convert`: a checkpoint from another library into a tfbert `.keras` file (and its tokenizer)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tfbert import architectures, artifacts
from tfbert.artifacts import preprocessor_fields, source_fields, write_manifest
from tfbert.artifacts.layout import HUGGINGFACE_CONFIG_FILE, MANIFEST_FILE, TOKENIZER_FOLDER
from tfbert.commands import add_command, add_overwrite_argument
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.outputs import beside_output, new_output


def _read_source(args: argparse.Namespace):
    """The checkpoint (`tfbert.artifacts.open`), its tokenizer (read first: a damaged tokenizer file is refused
    before the weights load) and its model: a sentence-transformers folder as a `SentenceEmbedder` with its pooling
    and normalisation, so the `.keras` file keeps them."""
    artifact = artifacts.open_as(args.checkpoint, args.source)
    tokenizer = _tokenizer_of(args, artifact)
    if args.heads and artifact.kind == "keras-hub":
        raise CommandError("keras-hub presets hold a backbone without heads; convert without --heads")
    model = artifact.load_model(heads=args.heads)
    if artifact.task.get("task") == "embedding" and not args.heads:
        # Deferred (start-up): `tfbert.models.tasks` imports Keras, kept out of `tfbert --help`
        from tfbert.models.tasks import SentenceEmbedder

        model = SentenceEmbedder(model, pooling=artifact.task["pooling"], normalize=artifact.task["normalize"])
    return artifact, tokenizer, model


def _tokenizer_of(args: argparse.Namespace, artifact):
    if artifact.kind == "tf1":
        # Deferred (start-up): `tfbert.convert.tf1` imports Keras, kept out of `tfbert --help`
        from tfbert.convert.tf1 import read_release, release_tokenizer

        return release_tokenizer(read_release(args.checkpoint), args.lowercase)
    return artifact.tokenizer


# The sources `convert` reads (the kinds of `tfbert.artifacts.open`).
SOURCES = ("huggingface", "tf1", "keras-hub")
# Targets: a tfbert model written as another library's checkpoint.
TO_HUGGINGFACE = "to-huggingface"


def _to_huggingface(args: argparse.Namespace) -> None:
    """Reads a tfbert model (`.keras`, fine-tuning model dir, pretraining run) and writes it as a Hugging Face folder."""
    # Deferred (start-up): `tfbert.text` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.convert.to_huggingface import read_tfbert_source, write_huggingface
    from tfbert.text import load_tokenizer

    if args.heads or args.lowercase is not None:
        raise CommandError("--heads, --cased and --uncased do not apply to to-huggingface: the model is written as it is")
    try:
        with new_output(args.output, overwrite=args.overwrite) as output:
            tokenizer = load_tokenizer(args.tokenizer) if args.tokenizer else None
            source = read_tfbert_source(args.checkpoint, tokenizer)
            architecture = args.architecture or source.architecture
            if architecture is None:
                raise ValueError(f"{args.checkpoint} does not say which architecture it is (no tfbert.json, "
                                 f"config.yaml or preprocessor.json beside it); pass --architecture "
                                 f"({', '.join(architectures.names())})")
            folders = write_huggingface(source.model, output, architecture, source.tokenizer, source.label_names,
                                        source.max_length)
            classes = [json.loads((folder / HUGGINGFACE_CONFIG_FILE).read_text())["architectures"][0]
                       for folder in folders]
    except (OSError, ValueError, ImportError) as error:
        raise CommandError(str(error)) from None
    for folder, name in zip(folders, classes):
        print(f"wrote {Path(args.output) / folder.relative_to(output)}: {name}")
    if source.tokenizer is None:
        print(f"no tokenizer written: none found beside {args.checkpoint}; pass --tokenizer DIR")


def _write_manifest(args: argparse.Namespace, artifact, model, tokenizer) -> None:
    """`tfbert.json` beside the `.keras` file: kind, family, config, tokenizer, packing, pooling, source."""
    from pathlib import Path

    output = Path(args.output)
    preprocessor = None
    if tokenizer is not None:
        preprocessor = {**preprocessor_fields(tokenizer=tokenizer), "packing_style": artifact.packing_style,
                        "sequence_length": artifact.sequence_length}
    write_manifest(output.parent, "converted-checkpoint", family=artifact.family, config=artifact.config,
                   preprocessor=preprocessor, task=artifact.task or None, **source_fields(artifact),
                   step=artifact.step, command=f"convert {args.source}", model_file=output.name)


def run(args: argparse.Namespace) -> None:
    """Reads the checkpoint (with its heads on `--heads`), then writes the model and its tokenizer, each complete."""
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.convert.writing` imports Keras, kept out of `tfbert --help`
    from tfbert.convert.writing import save_converted

    if args.source == TO_HUGGINGFACE:
        return _to_huggingface(args)
    if args.tokenizer or args.architecture:
        raise CommandError("--tokenizer and --architecture apply to to-huggingface")
    if not args.output.endswith(".keras"):
        raise CommandError(f"--output {args.output!r} must end with .keras")
    if args.lowercase is not None and args.source != "tf1":
        raise CommandError("--cased and --uncased apply to tf1 checkpoints; the other sources record their casing")
    try:
        with new_output(args.output, overwrite=args.overwrite) as output, \
                beside_output(args.output, (TOKENIZER_FOLDER, MANIFEST_FILE)):
            artifact, tokenizer, model = _read_source(args)
            tokenizer_folder = save_converted(model, output, tokenizer, replace_tokenizer=args.overwrite)
            _write_manifest(args, artifact, model, tokenizer)
    except (OSError, ValueError, ImportError) as error:
        raise CommandError(str(error)) from None
    print(f"wrote {args.output}: {type(model).__name__} with {model.count_params():,} parameters")
    if tokenizer_folder is not None:
        print(f"wrote {tokenizer_folder}: {type(tokenizer).__name__} with {tokenizer.vocabulary_size():,} tokens")
    elif args.source == "keras-hub":
        print("no tokenizer written: the preset has no tokenizer assets whose ids tfbert's tokenizers reproduce "
              "(XLM-R's are shifted as in fairseq); give finetune and export a --tokenizer")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `convert` subcommand to `tfbert`'s subparsers."""
    def families(format_name: str) -> str:
        return ", ".join(name for name in architectures.names() if format_name in architectures.get(name).formats)

    parser = add_command(
        commands, "convert", "convert a Hugging Face, Google TF1 or keras-hub checkpoint into a .keras file",
        f"Convert a checkpoint into a tfbert .keras file with the same outputs. huggingface: a folder with "
        f"config.json and model.safetensors or pytorch_model.bin (model_type "
        f"{', '.join(architectures.model_types('huggingface'))}); its tokenizer files (vocab.txt, spiece.model, "
        f"sentencepiece.bpe.model, vocab.json + merges.txt or tokenizer.json), if any, become tokenizer/. tf1: a release folder of Google's original code "
        f"({families('tf1')}: bert_config.json or albert_config.json, the checkpoint, vocab.txt or *.model); "
        f"its tokenizer is written to tokenizer/ beside the .keras file. keras-hub: a folder written by "
        f"save_to_preset ({families('keras_hub')} backbones), with its tokenizer where tfbert's gives the same ids. "
        f"OUT and tokenizer/ appear only when complete. to-huggingface: the other way, a tfbert model "
        f"({families('huggingface')}) written as a Hugging Face folder (config.json, model.safetensors, tokenizer "
        f"files; a sentence embedder also as a sentence-transformers model), complete or not at all.",
        "  tfbert convert huggingface all-MiniLM-L6-v2/ -o minilm.keras\n"
        "  tfbert convert huggingface bert-base-uncased/ -o bert.keras --heads   # keep the MLM and NSP heads\n"
        "  tfbert convert tf1 uncased_L-12_H-768_A-12/ -o bert/model.keras      # + bert/tokenizer/\n"
        "  tfbert convert tf1 albert_base/ -o albert/model.keras --heads         # MLM + SOP\n"
        "  tfbert convert tf1 electra_small/ -o electra/model.keras --heads      # generator + discriminator\n"
        "  tfbert convert tf1 my_bert_run/ -o mine/model.keras --cased          # the folder name says no casing\n"
        "  tfbert convert keras-hub bert_base_en_uncased/ -o kh_bert/model.keras\n"
        "  tfbert convert to-huggingface runs/sst2 -o hf/sst2                   # finetune model dir -> transformers\n"
        "  tfbert convert to-huggingface runs/bert -o hf/bert                   # pretraining run -> BertModel\n"
        "  tfbert convert to-huggingface runs/sts -o hf/sts                     # sentence embedder -> sentence-transformers\n")
    parser.add_argument("source", choices=[*SOURCES, TO_HUGGINGFACE],
                        help="the checkpoint's origin, or to-huggingface to write a tfbert model as a Hugging Face folder")
    parser.add_argument("checkpoint", help="the checkpoint folder (to-huggingface: a .keras file, a finetune model dir "
                                           "or a pretrain run folder)")
    parser.add_argument("-o", "--output", required=True,
                        help="the .keras file to write (to-huggingface: the folder)")
    parser.add_argument("--tokenizer", help="to-huggingface: the tokenizer folder (default: the one beside the model)")
    parser.add_argument("--architecture", help="to-huggingface: the family, where the model's folder does not say it")
    parser.add_argument("--heads", action="store_true",
                        help="keep the pretraining heads (MLM and NSP/SOP; ELECTRA's generator and discriminator)")
    casing = parser.add_mutually_exclusive_group()
    casing.add_argument("--cased", dest="lowercase", action="store_false", default=None,
                        help="tf1: the vocabulary is cased (do not lower-case the input)")
    casing.add_argument("--uncased", dest="lowercase", action="store_true",
                        help="tf1: lower-case the input (Google's uncased_ models, ALBERT, ELECTRA)")
    add_overwrite_argument(parser, "replace an existing OUT (and a tokenizer/ beside it that differs), each "
                                   "whole, once the new one is complete; without it they are refused")
    parser.set_defaults(run=run)
    return parser
