"""The `tfbert` command line.

    tfbert quickstart                                # vocabulary, tiny ALBERT, SavedModel, fill-mask (CPU minutes)
    tfbert configs                                   # shipped configs with parameter counts
    tfbert vocab --kind sentencepiece --data corpus.txt --vocab-size 8000 --output vocab/
    tfbert pretrain --config albert_tiny --tokenizer vocab/ --data corpus.txt --steps 1000 --model-dir runs/a
    tfbert finetune --pretrained runs/a --train train.tsv --eval dev.tsv --model-dir runs/cls
    tfbert export runs/cls/best.keras --name sst2 --tokenizer runs/cls/tokenizer --labels negative,positive
    tfbert predict saved_models/sst2 "a gripping film"   # also --file PATH, stdin, --json; fill-mask, embeddings
    tfbert convert huggingface CHECKPOINT_DIR -o model.keras [--heads]
    tfbert info                                      # versions, devices, the strategy `auto` picks
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from tfbert.commands.tensorflow_logs import import_tensorflow_quietly


class CommandError(Exception):
    """A user-facing failure: printed as one line, exit status 2, no traceback."""


def run_configs(args: argparse.Namespace) -> None:
    import_tensorflow_quietly()
    from tfbert.config import available_configs, load_config
    from tfbert.models.parameters import count_encoder_parameters

    rows = []
    for name in available_configs():
        config = load_config(name)
        encoder = config.encoder
        rows.append((name, config.architecture, encoder.num_layers, encoder.hidden_size, encoder.embedding_size,
                     encoder.sharing, count_encoder_parameters(encoder)))
    width = max(len(row[0]) for row in rows) + 2
    print(f"{'config':<{width}}{'arch':<10}{'L':>4}{'H':>6}{'E':>6}  {'sharing':<9}{'parameters':>14}")
    for name, arch, layers, hidden, embedding, sharing, count in rows:
        print(f"{name:<{width}}{arch:<10}{layers:>4}{hidden:>6}{embedding:>6}  {sharing:<9}{count:>14,}")


def run_convert(args: argparse.Namespace) -> None:
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


def run_vocab(args: argparse.Namespace) -> None:
    import_tensorflow_quietly()
    from tfbert.text import vocab_training

    missing = [path for path in args.data if not os.path.isfile(path)]
    if missing:
        raise CommandError(f"corpus file {missing[0]!r} does not exist")
    if args.vocab_size < 1:
        raise CommandError(f"--vocab-size {args.vocab_size}: give a positive number of tokens")
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise CommandError(f"--output {args.output!r} is a file; give a folder to write the tokenizer into")
    try:
        if args.kind == "wordpiece":
            tokenizer = vocab_training.train_wordpiece(args.data, args.vocab_size, args.output,
                                                       lowercase=not args.cased)
        elif args.kind == "byte_bpe":
            tokenizer = vocab_training.train_byte_bpe(args.data, args.vocab_size, args.output)
        else:
            model_type = "bpe" if args.kind == "sentencepiece_bpe" else "unigram"
            tokenizer = vocab_training.train_sentencepiece(args.data, args.vocab_size, args.output,
                                                           model_type=model_type, lowercase=not args.cased)
    except (OSError, ValueError, RuntimeError) as error:  # SentencePiece's trainer raises RuntimeError
        raise CommandError(str(error)) from None
    print(f"wrote {args.output}: {type(tokenizer).__name__} with {tokenizer.vocabulary_size():,} tokens")


def run_pretrain(args: argparse.Namespace) -> None:
    import_tensorflow_quietly()
    from tfbert.config import load_config
    from tfbert.training.pretraining import pretrain

    if os.path.exists(args.model_dir) and not os.path.isdir(args.model_dir):
        raise CommandError(f"--model-dir {args.model_dir!r} is a file; give a folder for checkpoints and the encoder")
    try:
        config = load_config(args.config)
        data = args.data[0] if len(args.data) == 1 and args.data[0].startswith("tfds:") else args.data
        model = pretrain(
            config, tokenizer=args.tokenizer, data=data, model_dir=args.model_dir, steps=args.steps,
            global_batch_size=args.batch_size, strategy=args.strategy, sequence_length=args.sequence_length,
            max_predictions=args.max_predictions, optimizer_recipe=args.optimizer, learning_rate=args.learning_rate,
            warmup_steps=args.warmup_steps,
            checkpoint_every=args.checkpoint_every, steps_per_execution=args.steps_per_execution, seed=args.seed,
            shuffle_buffer=args.shuffle_buffer,
        )
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    print(f"trained {args.steps} steps; encoder in {args.model_dir}/encoder/encoder.keras "
          f"({model.encoder.count_params():,} parameters)")


def run_finetune(args: argparse.Namespace) -> None:
    import_tensorflow_quietly()
    from tfbert.commands.finetune import run_finetune as finetune_from_arguments

    try:
        result = finetune_from_arguments(args)
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    scores = ", ".join(f"{name} {value:.4f}" for name, value in result["scores"].items())
    print(f"best epoch {result['best_epoch']}: {scores}; saved {result['path']}")


def run_info(args: argparse.Namespace) -> None:
    import_tensorflow_quietly()
    import keras
    import tensorflow as tf
    import tensorflow_text

    import tfbert
    from tfbert.distribute import describe_strategy, resolve_strategy

    print(f"tfbert {tfbert.__version__}, TensorFlow {tf.__version__}, TF-Text {tensorflow_text.__version__}, "
          f"Keras {keras.__version__} ({keras.backend.backend()} backend)")
    for kind in ("TPU", "GPU", "CPU"):
        devices = tf.config.list_logical_devices(kind)
        print(f"{kind}: {len(devices)} {'(' + ', '.join(d.name for d in devices) + ')' if devices else ''}".rstrip())
    print(f"strategy auto: {describe_strategy(resolve_strategy('auto'))}")


def build_parser() -> argparse.ArgumentParser:
    from tfbert.commands import add_command as _command

    parser = argparse.ArgumentParser(prog="tfbert", description="BERT-family encoders for TensorFlow and Keras.",
                                     epilog="`tfbert COMMAND --help` describes each command, with examples.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    from tfbert.commands.quickstart import add_quickstart_parser

    add_quickstart_parser(commands)

    configs = _command(
        commands, "configs", "list the shipped configs with their encoders' parameter counts",
        "List the configs shipped in tfbert (names for --config) with the architecture, layers (L), hidden size "
        "(H), embedding size (E), cross-layer sharing and the encoder's parameter count.",
        "  tfbert configs\n  tfbert pretrain --config albert_tiny ...   # a name from the list, or a YAML file\n")
    configs.set_defaults(run=run_configs)

    vocab = _command(
        commands, "vocab", "train a tokenizer vocabulary on a corpus",
        "Train a tokenizer on text files and write it to a folder that --tokenizer (pretrain, finetune, export) "
        "reads.",
        "  tfbert vocab --kind sentencepiece --data corpus.txt --vocab-size 8000 --output vocab/\n"
        "  tfbert vocab --kind wordpiece --data a.txt b.txt --vocab-size 30522 --output vocab/ --cased\n"
        "  tfbert vocab --kind byte_bpe --data corpus.txt --vocab-size 50265 --output vocab/   # RoBERTa\n")
    vocab.add_argument("--kind", required=True, choices=["wordpiece", "sentencepiece", "sentencepiece_bpe", "byte_bpe"],
                       help="wordpiece (BERT, ELECTRA), sentencepiece unigram or BPE (ALBERT, XLM-R), byte_bpe (RoBERTa)")
    vocab.add_argument("--data", required=True, nargs="+", help="text files, one sentence or paragraph a line")
    vocab.add_argument("--vocab-size", required=True, type=int, help="number of tokens, special tokens included")
    vocab.add_argument("--output", required=True, help="folder to write the tokenizer into")
    vocab.add_argument("--cased", action="store_true", help="keep case (default: lower-case, as uncased BERT/ALBERT)")
    vocab.set_defaults(run=run_vocab)

    pretrain = _command(
        commands, "pretrain", "pretrain BERT, ALBERT, RoBERTa, ELECTRA, SpanBERT, XLM or XLM-R; rerun to resume",
        "Pretrain an encoder with its paper's objectives (MLM + NSP/SOP, replaced-token detection, span "
        "boundaries, TLM) on text files or TensorFlow Datasets. Checkpoints go to --model-dir; rerunning the "
        "same command resumes from the newest one. The final encoder is MODEL_DIR/encoder/encoder.keras.",
        "  tfbert pretrain --config albert_tiny --tokenizer vocab/ --data corpus:web --steps 1000 --model-dir runs/a\n"
        "  tfbert pretrain --config bert_base --tokenizer vocab/ --data a.txt b.txt --steps 100000 \\\n"
        "      --model-dir gs://bucket/runs/bert --strategy tpu --steps-per-execution 200\n"
        "  tfbert pretrain --config my_model.yaml --tokenizer vocab/ --data tfds:wikipedia/20230601.en ...\n")
    pretrain.add_argument("--config", required=True, help="a shipped config name (tfbert configs) or a YAML file")
    pretrain.add_argument("--tokenizer", required=True, help="tokenizer folder (tfbert vocab writes one)")
    pretrain.add_argument("--data", required=True, nargs="+",
                          help="text files (a sentence a line, blank line between documents), corpus:web "
                               "(the bundled corpus), tfds:NAME, or for XLM tlm:SRC,TGT / mlm:A,B / clm:A,B")
    pretrain.add_argument("--model-dir", required=True, help="checkpoints, logs and the final encoder go here")
    pretrain.add_argument("--steps", required=True, type=int, help="total training steps")
    pretrain.add_argument("--batch-size", type=int, default=32, help="global batch size (default 32)")
    pretrain.add_argument("--strategy", default="auto", choices=["auto", "tpu", "gpu", "cpu", "multiworker"])
    pretrain.add_argument("--sequence-length", type=int, default=128)
    pretrain.add_argument("--max-predictions", type=int, default=20, help="masked positions per sequence")
    pretrain.add_argument("--optimizer", choices=["bert", "roberta", "albert", "electra", "electra-base"],
                          help="optimizer recipe: bert, roberta, electra (AdamW), albert (LAMB); default: the "
                               "config's pretraining recipe, else the architecture's paper")
    pretrain.add_argument("--learning-rate", type=float,
                          help="peak learning rate (default: the config's pretraining recipe, else the paper's)")
    pretrain.add_argument("--warmup-steps", type=int,
                          help="warm-up steps (default: the config's pretraining recipe, else the paper's)")
    pretrain.add_argument("--checkpoint-every", type=int, default=1000)
    pretrain.add_argument("--steps-per-execution", type=int, default=1, help="steps per host call (TPU: 100+)")
    pretrain.add_argument("--seed", type=int)
    pretrain.add_argument("--shuffle-buffer", type=int, default=1000,
                          help="documents, then examples, are shuffled with buffers of this many (0: corpus order)")
    pretrain.set_defaults(run=run_pretrain)

    from tfbert.commands.export import add_export_parser
    from tfbert.commands.finetune import add_finetune_parser
    from tfbert.commands.predict import add_predict_parser

    add_finetune_parser(commands).set_defaults(run=run_finetune)
    add_export_parser(commands)
    add_predict_parser(commands)

    info = _command(
        commands, "info", "versions, devices and the strategy 'auto' would pick",
        "Print the versions of tfbert, TensorFlow, TF-Text and Keras, the TPUs, GPUs and CPUs TensorFlow sees, "
        "and the distribution strategy that --strategy auto picks on this machine.",
        "  tfbert info\n")
    info.set_defaults(run=run_info)

    convert = _command(
        commands, "convert", "convert a checkpoint from another library into a .keras file",
        "Convert a Hugging Face BERT, ALBERT, RoBERTa, ELECTRA, XLM or XLM-R checkpoint folder (config.json and "
        "model.safetensors or pytorch_model.bin) into a tfbert .keras file with the same outputs.",
        "  tfbert convert huggingface all-MiniLM-L6-v2/ -o minilm.keras\n"
        "  tfbert convert huggingface bert-base-uncased/ -o bert.keras --heads   # keep the MLM and NSP heads\n")
    convert.add_argument("source", choices=["huggingface"], help="the checkpoint's library")
    convert.add_argument("checkpoint", help="folder with config.json and model.safetensors or pytorch_model.bin")
    convert.add_argument("-o", "--output", required=True, help="the .keras file to write")
    convert.add_argument("--heads", action="store_true", help="keep the pretraining heads (MLM and NSP/SOP)")
    convert.set_defaults(run=run_convert)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    # `tfbert predict MODEL --json a b`: texts after options (argparse gives a `*` positional only its first run).
    intermixed = getattr(args, "intermixed", None)
    if extras and intermixed and not any(extra.startswith("-") and extra != "-" for extra in extras):
        getattr(args, intermixed).extend(extras)
    elif extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    try:
        args.run(args)
    except CommandError as error:
        message = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
        print(f"tfbert {args.command}: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    # `python -m tfbert.cli`: run the imported module's main, so the commands' `CommandError` is this one.
    from tfbert.cli import main as cli_main

    sys.exit(cli_main())
