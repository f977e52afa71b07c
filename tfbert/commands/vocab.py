"""`tfbert vocab`: train a WordPiece, SentencePiece or byte-level BPE tokenizer on text files."""

from __future__ import annotations

import argparse
import os

from tfbert.commands import add_command
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly


def run(args: argparse.Namespace) -> None:
    """Checks the corpus and output, trains the tokenizer and writes it to `--output`."""
    import_tensorflow_quietly()
    from tfbert.data.input_checks import check_text_file
    from tfbert.text import vocab_training

    missing = [path for path in args.data if not os.path.exists(path)]
    if missing:
        raise CommandError(f"corpus file {missing[0]!r} does not exist")
    try:
        for path in args.data:
            check_text_file(path)
    except ValueError as error:
        raise CommandError(str(error)) from None
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


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `vocab` subcommand to `tfbert`'s subparsers."""
    parser = add_command(
        commands, "vocab", "train a tokenizer vocabulary on a corpus",
        "Train a tokenizer on text files and write it to a folder that --tokenizer (pretrain, finetune, export) "
        "reads.",
        "  tfbert vocab --kind sentencepiece --data corpus.txt --vocab-size 8000 --output vocab/\n"
        "  tfbert vocab --kind wordpiece --data a.txt b.txt --vocab-size 30522 --output vocab/ --cased\n"
        "  tfbert vocab --kind byte_bpe --data corpus.txt --vocab-size 50265 --output vocab/   # RoBERTa\n")
    parser.add_argument("--kind", required=True,
                        choices=["wordpiece", "sentencepiece", "sentencepiece_bpe", "byte_bpe"],
                        help="wordpiece (BERT, ELECTRA), sentencepiece unigram or BPE (ALBERT, XLM-R), "
                             "byte_bpe (RoBERTa)")
    parser.add_argument("--data", required=True, nargs="+", help="text files, one sentence or paragraph a line")
    parser.add_argument("--vocab-size", required=True, type=int, help="number of tokens, special tokens included")
    parser.add_argument("--output", required=True, help="folder to write the tokenizer into")
    parser.add_argument("--cased", action="store_true",
                        help="keep case (default: lower-case, as uncased BERT/ALBERT)")
    parser.set_defaults(run=run)
    return parser
