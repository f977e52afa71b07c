"""`tfbert finetune`: text classification or regression from local files or GLUE, on any pretrained encoder.

    tfbert finetune --pretrained runs/albert_tiny --train train.tsv --eval dev.tsv \
        --text-columns sentence --label-column label --model-dir runs/sst2
    tfbert finetune --pretrained all-MiniLM-L6-v2/ --glue sst2 --model-dir runs/sst2
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tfbert import artifacts
from tfbert.commands import add_command, add_overwrite_argument, flag_types
from tfbert.commands.backend_flag import add_backend_arguments
from tfbert.commands.errors import CommandError
from tfbert.commands.jit_flag import FINETUNE_AUTO_JIT, add_jit_compile_argument
from tfbert.commands.precision_flag import add_precision_argument, show_precision_choice
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.outputs import new_output
from tfbert.training.settings import TrainingSettings

if TYPE_CHECKING:
    from tfbert.artifacts import Artifact
    from tfbert.text.base import Tokenizer

# TensorFlow is imported inside the functions, so `tfbert --help` stays instant.


class FinetuneInputError(ValueError):
    """Bad arguments or data for `tfbert finetune`, reported as one line."""


def find_tokenizer(pretrained: "Artifact", tokenizer: str | None) -> "Tokenizer":
    """The tokenizer given, else the one that goes with the opened pretrained model (`Artifact.require_tokenizer`)."""
    # Deferred (start-up): `tfbert.text` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.text import load_tokenizer

    if tokenizer:
        return load_tokenizer(tokenizer)
    try:
        return pretrained.require_tokenizer()
    except FileNotFoundError as error:
        raise FinetuneInputError(f"{error}; pass --tokenizer") from None


def _read_files(paths, read) -> list:
    # Deferred (start-up): `tfbert.data.text_examples` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.data.text_examples import read_text_examples

    return [(str(path), read_text_examples(path, **read)) for path in paths]


def _joined(files):
    # Deferred (start-up): `tfbert.data.text_examples` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.data.text_examples import TextExamples

    parts = [examples for _, examples in files]
    if len(parts) == 1:
        return parts[0]
    pair = [part.pair_texts for part in parts]
    return TextExamples([text for part in parts for text in part.texts],
                        None if any(texts is None for texts in pair) else [text for texts in pair for text in texts],
                        np.concatenate([part.labels for part in parts]))


def _declared_classes(args: argparse.Namespace) -> int | None:
    if args.num_classes is not None and args.label_names and args.num_classes != len(args.label_names):
        raise FinetuneInputError(f"--num-classes {args.num_classes} but --label-names names "
                                 f"{len(args.label_names)} classes; give one or make them agree")
    if args.num_classes is not None and args.num_classes < 2:
        raise FinetuneInputError(f"--num-classes {args.num_classes}: a classifier needs at least 2 classes")
    return args.num_classes if args.num_classes is not None else len(args.label_names) if args.label_names else None


def _examples(args: argparse.Namespace, decoder):
    """Training and evaluation examples, whether they are scores, the metric and the class count (None: GLUE's)."""
    # Deferred (start-up): `tfbert.data.text_examples` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.data.text_examples import GLUE_TASKS, load_glue
    from tfbert.finetuning.label_checks import check_class_labels

    if args.glue:
        if args.glue not in GLUE_TASKS:
            raise FinetuneInputError(f"unknown GLUE task {args.glue!r}; choose from {', '.join(GLUE_TASKS)}")
        task = GLUE_TASKS[args.glue]
        return (load_glue(args.glue, "train"), load_glue(args.glue, task.validation_split), task.is_regression,
                task.metric, None)
    regression = args.task == "regression"
    read = {"text_columns": tuple(args.text_columns), "label_column": args.label_column, "regression": regression,
            "label_names": args.label_names, "decoder": decoder}
    train, evaluation = _read_files(args.train, read), _read_files([args.eval], read)
    if regression:
        return _joined(train), _joined(evaluation), True, "spearman_correlation", None
    classes = check_class_labels(train, evaluation, _declared_classes(args), args.label_column)
    print(f"labels: {classes.describe()}")
    return _joined(train), _joined(evaluation), False, "accuracy", classes.num_classes


def _check_files(args: argparse.Namespace) -> None:
    if not Path(args.pretrained).exists():
        raise FileNotFoundError(f"pretrained model {args.pretrained!r} does not exist")
    if not args.glue and not (args.train and args.eval):
        raise FinetuneInputError("give --train and --eval files, or --glue TASK")
    if args.task == "embedding" and args.glue:
        raise FinetuneInputError("--task embedding trains on sentence-pair files (--train, --eval), not --glue")
    if args.pooling == "max" and args.task != "embedding":
        raise FinetuneInputError("--pooling max is for --task embedding; classification and regression pool with "
                                 "pooler, mean or cls")


def finetune_from_arguments(args: argparse.Namespace) -> dict:
    """Fine-tunes, keeps the best epoch in `model_dir/best.keras`, and writes the preprocessor (`preprocessor.json`,
    `tokenizer/`) and `task.json` beside it. The pretrained model is opened once (`tfbert.artifacts.open`) and
    that `Artifact` is handed down."""
    # Deferred (start-up): `tfbert.data.text_decoding` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.data.text_decoding import LineDecoder

    _check_files(args)
    with new_output(args.model_dir, flag="--model-dir", overwrite=args.overwrite) as model_dir:
        examples = None
        if args.task != "embedding":   # the data is checked before the model is loaded
            decoder = LineDecoder(args.encoding_errors)
            examples = _examples(args, decoder)
            if decoder.summary():
                print(f"tfbert finetune: warning: {decoder.summary()}", file=sys.stderr)
        pretrained = artifacts.open(args.pretrained)
        preprocessor = pretrained.preprocessor_with(find_tokenizer(pretrained, args.tokenizer), args.max_length)
        with tempfile.TemporaryDirectory() as scratch:
            encoder = pretrained.with_tokenizer(preprocessor.tokenizer, Path(scratch))
            if args.task == "embedding":
                result = _run_embedding(args, pretrained, encoder, preprocessor, model_dir)
            else:
                result = _run_classification(args, pretrained, encoder, preprocessor, examples, model_dir)
    return {**result, "path": str(Path(args.model_dir) / Path(result["path"]).name)}


def _run_classification(args: argparse.Namespace, source: "Artifact", pretrained: "Artifact", preprocessor, examples,
                        model_dir: str) -> dict:
    """Classification or regression of `args` on `examples` (`_examples`), from the encoder of `pretrained` (`source`
    itself, or its encoder grown for the tokenizer)."""
    # Deferred (start-up): `tfbert.finetuning.evaluation` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.finetuning.evaluation import classification_evaluator, regression_evaluator
    from tfbert.finetuning.features import encode_texts
    from tfbert.finetuning.finetune import finetune
    from tfbert.models.tasks import SequenceClassifier, SequenceRegressor
    from tfbert.finetuning.model_dir import write_task

    train, evaluation, regression, metric, num_classes = examples
    label_names = None if args.glue else args.label_names
    train_x = encode_texts(preprocessor, train.texts, train.pair_texts)
    eval_x = encode_texts(preprocessor, evaluation.texts, evaluation.pair_texts)
    pooling = args.pooling or "pooler"
    if regression:
        def build(encoder):
            return SequenceRegressor(encoder, pooling=pooling)
        evaluate = regression_evaluator(eval_x, evaluation.labels.astype("float32"))
    else:
        if num_classes is None:   # GLUE
            num_classes = int(max(np.max(train.labels), np.max(evaluation.labels))) + 1
        if num_classes < 2:
            raise FinetuneInputError(f"{args.train or args.glue}: labels hold a single class; need at least 2")

        def build(encoder):
            return SequenceClassifier(encoder, num_classes=num_classes, pooling=pooling)
        evaluate = classification_evaluator(eval_x, evaluation.labels)
    result = finetune(build, pretrained, train_x, train.labels, evaluate, monitor=metric, model_dir=model_dir,
                      settings=TrainingSettings.from_flags(args))
    preprocessor.save(model_dir)
    task = {"task": "regression" if regression else "classification", "label_names": label_names,
            "max_length": args.max_length, "pair": train.pair_texts is not None, "metric": metric}
    if regression:
        task["score_range"] = [float(np.min(train.labels)), float(np.max(train.labels))]
    write_task(model_dir, task, source=source, preprocessor=preprocessor)
    return {"best_epoch": result.best_epoch, "scores": result.best_scores, "path": result.best_path, "metric": metric}


def _run_embedding(args: argparse.Namespace, source: "Artifact", pretrained: "Artifact", preprocessor,
                   model_dir: str) -> dict:
    """`--task embedding`: Sentence-BERT on sentence-pair files (see `tfbert.finetuning.embeddings`)."""
    # Deferred (start-up): `tfbert.data.sentence_pairs` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.data.sentence_pairs import combine_pairs, read_sentence_pairs
    from tfbert.finetuning.embeddings import train_sentence_embedder
    from tfbert.finetuning.model_dir import write_model_dir_manifest

    train = combine_pairs([read_sentence_pairs(path, args.format) for path in args.train])
    evaluation = read_sentence_pairs(args.eval, args.format)
    result = train_sentence_embedder(
        pretrained, preprocessor.tokenizer, train, evaluation, model_dir, loss=args.loss,
        pooling=args.pooling or source.task.get("pooling") or "mean", max_length=args.max_length,
        score_scale=tuple(args.score_range) if args.score_range else None, scale=args.scale, margin=args.margin,
        symmetric=args.symmetric, settings=TrainingSettings.from_flags(args))
    preprocessor.save(model_dir)  # its architecture, for export and convert to-huggingface
    write_model_dir_manifest(model_dir, source=source, preprocessor=preprocessor)
    return {"best_epoch": result.best_epoch, "scores": result.best_scores, "path": result.best_path,
            "metric": "spearman_correlation"}


def run(args: argparse.Namespace) -> None:
    """`tfbert finetune`: fine-tune, then print the best epoch's scores and where the model went."""
    import_tensorflow_quietly()
    show_precision_choice()
    try:
        result = finetune_from_arguments(args)
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    scores = ", ".join(f"{name} {value:.4f}" for name, value in result["scores"].items())
    print(f"best epoch {result['best_epoch']}: {scores}; saved {result['path']}")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `finetune` subcommand to `tfbert`'s subparsers."""
    parser = add_command(
        commands, "finetune", "fine-tune a pretrained encoder: classification, regression, sentence embeddings",
        "Fine-tune a pretrained encoder (a tfbert pretraining run, an encoder .keras file or a Hugging Face folder) "
        "for classification or regression on CSV/TSV/JSON Lines files or a GLUE task, or as a sentence embedder "
        "(--task embedding, Sentence-BERT) on sentence-pair files: KorSTS, KorNLI, KLUE-STS/NLI JSON, STS-B, "
        "s1<TAB>s2<TAB>score or JSON Lines. The best epoch is kept in MODEL_DIR/best.keras, with "
        "preprocessor.json, tokenizer/ and task.json beside it, which tfbert export reads.",
        """
        tfbert finetune --pretrained runs/albert_tiny --train train.tsv --eval dev.tsv --model-dir runs/sst2
        tfbert finetune --pretrained all-MiniLM-L6-v2/ --train nli.csv --eval nli_dev.csv \\
            --text-columns premise hypothesis --label-names entailment neutral contradiction --model-dir runs/nli
        tfbert finetune --pretrained runs/bert --train sts.tsv --eval sts_dev.tsv --task regression --model-dir runs/sts
        tfbert finetune --pretrained runs/bert --glue sst2 --model-dir runs/sst2    # GLUE from TFDS
        tfbert finetune --task embedding --pretrained runs/albert --train sts-train.tsv --eval sts-dev.tsv \\
            --loss cosine --model-dir runs/korsts                                 # KorSTS, scores 0-5 -> 0-1
        tfbert finetune --task embedding --pretrained runs/albert --train snli_1.0_train.ko.tsv \\
            --eval sts-dev.tsv --loss softmax --model-dir runs/kornli             # SBERT's NLI recipe
        tfbert finetune --task embedding --pretrained runs/korsts --train gold.tsv silver.tsv --eval sts-dev.tsv \\
            --model-dir runs/korsts-silver                                        # gold + silver (tfbert augment)
        tfbert export runs/sst2/best.keras --name sst2                             # then serve it
        """)
    parser.add_argument("--pretrained", required=True,
                        help="a tfbert pretraining run, an encoder .keras file, a Hugging Face folder, or a model dir "
                             "of finetune --task embedding / distill")
    parser.add_argument("--model-dir", required=True,
                        help="best.keras, best.json, preprocessor.json, tokenizer/ and task.json go here")
    parser.add_argument("--glue", help="a GLUE task from TensorFlow Datasets (sst2, mrpc, stsb, ...)")
    parser.add_argument("--train", nargs="+",
                        help="training file(s): CSV, TSV or JSON Lines with text and label columns; for --task "
                             "embedding, sentence-pair files of one kind (e.g. gold.tsv silver.tsv)")
    parser.add_argument("--eval", help="the evaluation file, same columns (for --task embedding: scored STS pairs)")
    parser.add_argument("--task", choices=["classification", "regression", "embedding"], default="classification",
                        help="classification (integer or --label-names labels), regression (float scores; a "
                             "cross-encoder), or embedding (a bi-encoder, Sentence-BERT)")
    parser.add_argument("--text-columns", nargs="+", default=["sentence"], help="one column, or two for pairs")
    parser.add_argument("--label-column", default="label")
    parser.add_argument("--label-names", "--labels", nargs="+",
                        help="class names, when labels are strings; declares the classes (labels are checked)")
    parser.add_argument("--num-classes", type=flag_types.class_count,
                        help="declare the number of classes: a label outside 0..N-1 is an error naming its line "
                             "(default: inferred from the training labels, which must be 0..K-1 without gaps)")
    parser.add_argument("--encoding-errors", choices=["strict", "replace"], default="strict",
                        help="bytes that are not UTF-8: strict (an error naming the file and line) or replace "
                             "(by U+FFFD, reporting how many lines changed)")
    parser.add_argument("--tokenizer", help="tokenizer folder (default: found beside --pretrained)")
    parser.add_argument("--max-length", type=flag_types.sequence_length, default=128)
    parser.add_argument("--pooling", choices=["pooler", "mean", "cls", "max"],
                        help="default: pooler for classification and regression, mean for embedding (max: embedding)")
    parser.add_argument("--epochs", type=flag_types.positive_int, default=3)
    parser.add_argument("--batch-size", type=flag_types.positive_int, default=32)
    parser.add_argument("--learning-rate", type=flag_types.learning_rate, help="peak learning rate (default 2e-5)")
    add_backend_arguments(parser)
    parser.add_argument("--seed", type=flag_types.seed)
    add_precision_argument(parser)
    add_jit_compile_argument(parser, auto=FINETUNE_AUTO_JIT)
    add_overwrite_argument(parser)
    _add_embedding_arguments(parser.add_argument_group("--task embedding (sentence-transformers' losses)"))
    parser.set_defaults(run=run)
    return parser


def _add_embedding_arguments(embedding: argparse._ArgumentGroup) -> None:
    embedding.add_argument("--loss", default="cosine",
                           help="cosine (scored pairs: MSE of cos(u, v) and the score mapped to 0-1), contrastive "
                                "(pairs labelled 1/0, cosine distance, --margin), multiple-negatives (pairs or "
                                "anchor/positive/negative triplets, in-batch negatives, --scale, --symmetric) or "
                                "softmax (NLI pairs, classifier over (u, v, |u-v|)); default cosine")
    embedding.add_argument("--score-range", nargs=2, type=flag_types.score, metavar=("LOW", "HIGH"),
                           help="the scale of the training scores, mapped to 0-1 for the cosine loss (default: the "
                                "format's, 0-5 for KorSTS/STS-B/KLUE-STS, else detected from the scores)")
    embedding.add_argument("--format", help="force the pair format: korsts, stsb, kornli, klue-sts, klue-nli, pairs "
                                            "or jsonl (default: from the extension and header)")
    embedding.add_argument("--margin", type=flag_types.margin, default=0.5,
                           help="contrastive: distance margin (default 0.5)")
    embedding.add_argument("--scale", type=flag_types.similarity_scale, default=20.0,
                           help="multiple-negatives: cosine scale (default 20)")
    embedding.add_argument("--symmetric", action="store_true",
                           help="multiple-negatives: also rank each positive's anchor among the batch's anchors")
