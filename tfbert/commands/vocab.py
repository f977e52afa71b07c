"""`tfbert vocab`: train a WordPiece, SentencePiece or byte-level BPE tokenizer on text files;
`tfbert vocab add` inserts words into one, `tfbert vocab stats` measures one on a text."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from tfbert.artifacts import preprocessor_fields, write_manifest
from tfbert.commands import add_command, add_overwrite_argument, flag_types
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.outputs import check_free, new_output


def _train_files(args: argparse.Namespace, work_dir: str) -> list[str]:
    """The corpus files, or their morpheme split (`--pre-tokenize mecab`) written under `work_dir`."""
    if args.pre_tokenize is None:
        return args.data
    # Deferred (start-up): `tfbert.text.morphemes` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.text import morphemes, vocab_training

    try:
        split = morphemes.mecab_splitter()
    except ImportError as error:
        raise CommandError(str(error)) from None
    output = Path(work_dir) / "pre_tokenized.txt"
    return [str(morphemes.pre_tokenize_lines(vocab_training.corpus_lines(args.data), output, split))]


def run_train(args: argparse.Namespace) -> None:
    """Checks the corpus and output, trains the tokenizer and writes it to `--output`."""
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.data.input_checks` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.data.input_checks import check_text_file
    from tfbert.text import vocab_training

    for name in ("kind", "data", "vocab_size", "output"):
        if getattr(args, name) is None:
            raise CommandError(f"--{name.replace('_', '-')} is required to train a vocabulary "
                               "(or give `tfbert vocab add` / `tfbert vocab stats`)")
    missing = [path for path in args.data if not os.path.exists(path)]
    if missing:
        raise CommandError(f"corpus file {missing[0]!r} does not exist")
    try:
        for path in args.data:
            check_text_file(path, allow_nul=True)
    except ValueError as error:
        raise CommandError(str(error)) from None
    try:
        with new_output(args.output, overwrite=args.overwrite) as output, \
                tempfile.TemporaryDirectory(prefix="tfbert_vocab_") as work_dir:
            data = _train_files(args, work_dir)
            if args.kind == "wordpiece":
                tokenizer = vocab_training.train_wordpiece(data, args.vocab_size, output, lowercase=not args.cased)
            elif args.kind == "byte_bpe":
                tokenizer = vocab_training.train_byte_bpe(data, args.vocab_size, output)
            else:
                model_type = "bpe" if args.kind == "sentencepiece_bpe" else "unigram"
                tokenizer = vocab_training.train_sentencepiece(data, args.vocab_size, output,
                                                               model_type=model_type, lowercase=not args.cased)
            _write_manifest(output, tokenizer, source=",".join(args.data), command=f"vocab --kind {args.kind}")
    except (OSError, ValueError, RuntimeError) as error:  # SentencePiece's trainer raises RuntimeError
        raise CommandError(str(error)) from None
    print(f"wrote {args.output}: {type(tokenizer).__name__} with {tokenizer.vocabulary_size():,} tokens")


def _load(path: str):
    # Deferred (start-up): `tfbert.text` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.text import load_tokenizer

    try:
        return load_tokenizer(path)
    except (OSError, ValueError) as error:
        raise CommandError(f"TOKENIZER {path!r}: {error}; give a folder written by `tfbert vocab` or `tfbert convert`") from None


def _write_manifest(folder, tokenizer, source: str, command: str) -> None:
    """`tfbert.json`: a vocabulary, its tokenizer class, casing and size, and what it was made from."""
    write_manifest(folder, "vocab", preprocessor=preprocessor_fields(tokenizer=tokenizer), source=source,
                   command=command)


def run_add(args: argparse.Namespace) -> None:
    """Adds the words of `--tokens` to a copy of TOKENIZER written to `--output`."""
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.text.vocab_insertion` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.text import vocab_insertion

    check_free(args.output, flag="--output", overwrite=args.overwrite)
    if not os.path.isfile(args.tokens):
        raise CommandError(f"--tokens {args.tokens!r} does not exist; give a text file with one word a line")
    tokenizer = _load(args.tokenizer)
    try:
        with open(args.tokens, encoding="utf-8-sig") as file:
            words = vocab_insertion.read_words(file.read().splitlines(), f"--tokens {args.tokens}")
        insertion = vocab_insertion.insert_words(tokenizer, words)
    except UnicodeDecodeError:
        raise CommandError(f"--tokens {args.tokens!r} is not UTF-8 text") from None
    except ValueError as error:
        raise CommandError(str(error)) from None
    with new_output(args.output, overwrite=args.overwrite) as output:
        insertion.tokenizer.save_assets(output)
        _write_manifest(output, insertion.tokenizer, source=args.tokenizer, command="vocab add")
    before, after = tokenizer.vocabulary_size(), insertion.tokenizer.vocabulary_size()
    print(f"wrote {args.output}: {type(tokenizer).__name__} with {after:,} tokens "
          f"({len(insertion.added):,} added as ids {before:,}-{after - 1:,}; old ids unchanged)")
    if insertion.existing:
        print(f"already in the vocabulary, not added ({len(insertion.existing)}): {' '.join(insertion.existing)}")
    if insertion.split:
        print(f"still more than one piece as a word ({len(insertion.split)}): {' '.join(insertion.split)}")
    print(f"next: tfbert pretrain --init-from RUN --tokenizer {args.output} ... resizes the token table")


def run_stats(args: argparse.Namespace) -> None:
    """Prints the unknown-piece rate, pieces per word and coverage of TOKENIZER on `--data`."""
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.text.vocab_stats` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.text import vocab_stats

    tokenizer = _load(args.tokenizer)
    missing = [path for path in args.data if not os.path.isfile(path)]
    if missing:
        raise CommandError(f"--data {missing[0]!r} does not exist")
    try:
        lines = [line for path in args.data for line in Path(path).read_text(encoding="utf-8").splitlines()]
        stats = vocab_stats.vocabulary_stats(tokenizer, lines)
    except UnicodeDecodeError:
        raise CommandError(f"--data: a file is not UTF-8 text ({', '.join(args.data)})") from None
    except ValueError as error:
        raise CommandError(f"--data: {error}") from None
    if args.json:
        print(json.dumps({"tokenizer": args.tokenizer, "vocabulary_size": tokenizer.vocabulary_size(), **stats.as_dict()}))
        return
    print(f"{args.tokenizer}: {tokenizer.vocabulary_size():,} tokens, on {stats.words:,} words of {', '.join(args.data)}")
    print(f"  unknown pieces   {stats.unknown_rate:7.2%}  ({stats.unknown_pieces:,} of {stats.pieces:,})")
    print(f"  pieces per word  {stats.pieces_per_word:7.2f}")
    print(f"  coverage         {stats.coverage:7.2%}  (words that are one known piece)")


def run(args: argparse.Namespace) -> None:
    """Dispatches to training, `add` or `stats`."""
    {"add": run_add, "stats": run_stats}.get(args.action, run_train)(args)


def _add_actions(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="{add,stats}",
                                    help="add words to a tokenizer, or measure one on a text (default: train)")
    add = actions.add_parser("add", help="add words to a tokenizer; old ids unchanged",
                             description="Write a copy of TOKENIZER with the words of --tokens added, each one "
                                         "piece where it stands as a word; every existing id is unchanged.")
    add.add_argument("tokenizer", metavar="TOKENIZER", help="tokenizer folder (never modified)")
    add.add_argument("--tokens", required=True, help="UTF-8 text file, one word a line")
    add.add_argument("--output", required=True, help="new folder for the grown tokenizer")
    add_overwrite_argument(add)
    stats = actions.add_parser("stats", help="unknown-piece rate, pieces per word and coverage on a text",
                               description="Tokenize the words of --data and print the share of unknown pieces, "
                                           "pieces per whitespace word and the share of words that are one piece.")
    stats.add_argument("tokenizer", metavar="TOKENIZER", help="tokenizer folder")
    stats.add_argument("--data", required=True, nargs="+", help="UTF-8 text files")
    stats.add_argument("--json", action="store_true", help="print one JSON object")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `vocab` subcommand (and its `add` and `stats` actions) to `tfbert`'s subparsers."""
    parser = add_command(
        commands, "vocab", "train, grow or measure a tokenizer vocabulary",
        "Train a tokenizer on text files and write it to a folder that --tokenizer (pretrain, finetune, export) "
        "reads; `vocab add` inserts words into a copy of one, `vocab stats` measures one on a text.",
        "  tfbert vocab --kind sentencepiece --data corpus.txt --vocab-size 8000 --output vocab/\n"
        "  tfbert vocab --kind wordpiece --data a.txt b.txt --vocab-size 30522 --output vocab/ --cased\n"
        "  tfbert vocab --kind byte_bpe --data corpus.txt --vocab-size 50265 --output vocab/   # RoBERTa\n"
        "  tfbert vocab --kind sentencepiece --data ko.txt --vocab-size 32000 --output ko_vocab/ --pre-tokenize mecab\n"
        "  tfbert vocab add ko_vocab/ --tokens domain_words.txt --output ko_vocab_domain/\n"
        "  tfbert vocab stats ko_vocab_domain/ --data domain.txt [--json]\n")
    parser.add_argument("--kind", choices=["wordpiece", "sentencepiece", "sentencepiece_bpe", "byte_bpe"],
                        help="wordpiece (BERT, ELECTRA), sentencepiece unigram or BPE (ALBERT, XLM-R), "
                             "byte_bpe (RoBERTa)")
    parser.add_argument("--data", nargs="+", help="text files, one sentence or paragraph a line")
    parser.add_argument("--vocab-size", type=flag_types.vocab_size,
                        help="number of tokens, special tokens included: exactly this many, or an error saying why not")
    parser.add_argument("--output", help="folder to write the tokenizer into")
    parser.add_argument("--cased", action="store_true",
                        help="keep case (default: lower-case, as uncased BERT/ALBERT; Hangul syllables are kept)")
    parser.add_argument("--pre-tokenize", choices=["mecab"],
                        help="split the training text into Korean morphemes first (pip install 'tfbert[mecab]'); "
                             "models still tokenize raw text in the graph")
    add_overwrite_argument(parser)
    _add_actions(parser)
    parser.set_defaults(run=run, action=None)
    return parser
