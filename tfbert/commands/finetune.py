"""`tfbert finetune`: text classification or regression from local files or GLUE, on any pretrained encoder.

    tfbert finetune --pretrained runs/albert_tiny --train train.tsv --eval dev.tsv \
        --text-columns sentence --label-column label --model-dir runs/sst2
    tfbert finetune --pretrained all-MiniLM-L6-v2/ --glue sst2 --model-dir runs/sst2
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tfbert.commands import add_command
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly

if TYPE_CHECKING:
    from tfbert.text.base import Tokenizer

# TensorFlow is imported inside the functions, so `tfbert --help` stays instant.
TASK_FILE = "task.json"


class FinetuneInputError(ValueError):
    """Bad arguments or data for `tfbert finetune`, reported as one line."""


def find_tokenizer(pretrained: Path, tokenizer: str | None) -> "Tokenizer":
    """The tokenizer given, else the one that goes with the pretrained model (see `load_pretrained_tokenizer`)."""
    from tfbert.tasks import load_pretrained_tokenizer
    from tfbert.text import load_tokenizer

    if tokenizer:
        return load_tokenizer(tokenizer)
    try:
        return load_pretrained_tokenizer(pretrained)
    except FileNotFoundError as error:
        raise FinetuneInputError(f"{error}; pass --tokenizer") from None


def _examples(args: argparse.Namespace):
    from tfbert.tasks import GLUE_TASKS, load_glue, read_text_examples

    if args.glue:
        if args.glue not in GLUE_TASKS:
            raise FinetuneInputError(f"unknown GLUE task {args.glue!r}; choose from {', '.join(GLUE_TASKS)}")
        task = GLUE_TASKS[args.glue]
        return (load_glue(args.glue, "train"), load_glue(args.glue, task.validation_split), task.is_regression,
                task.metric, None)
    if not (args.train and args.eval):
        raise FinetuneInputError("give --train and --eval files, or --glue TASK")
    regression = args.task == "regression"
    read = {"text_columns": tuple(args.text_columns), "label_column": args.label_column, "regression": regression,
            "label_names": args.label_names}
    train, evaluation = read_text_examples(args.train, **read), read_text_examples(args.eval, **read)
    return train, evaluation, regression, "spearman_correlation" if regression else "accuracy", args.label_names


def finetune_from_arguments(args: argparse.Namespace) -> dict:
    """Fine-tunes, keeps the best epoch in `model_dir/best.keras`, and writes the preprocessor (`preprocessor.json`,
    `tokenizer/`) and `task.json` beside it."""
    from tfbert.tasks import (SequenceClassifier, SequenceRegressor, classification_evaluator, encode_texts, finetune,
                              regression_evaluator)
    from tfbert.tasks.pretrained import load_pretrained_preprocessor

    pretrained = Path(args.pretrained)
    if not pretrained.exists():
        raise FileNotFoundError(f"pretrained model {str(pretrained)!r} does not exist")
    preprocessor = load_pretrained_preprocessor(pretrained, find_tokenizer(pretrained, args.tokenizer),
                                                args.max_length)
    train, evaluation, regression, metric, label_names = _examples(args)
    train_x = encode_texts(preprocessor, train.texts, train.pair_texts)
    eval_x = encode_texts(preprocessor, evaluation.texts, evaluation.pair_texts)
    if regression:
        def build(encoder):
            return SequenceRegressor(encoder, pooling=args.pooling)
        evaluate = regression_evaluator(eval_x, evaluation.labels.astype("float32"))
    else:
        num_classes = len(label_names) if label_names else int(max(np.max(train.labels), np.max(evaluation.labels))) + 1
        if num_classes < 2:
            raise FinetuneInputError(f"{args.train or args.glue}: labels hold a single class; need at least 2")

        def build(encoder):
            return SequenceClassifier(encoder, num_classes=num_classes, pooling=args.pooling)
        evaluate = classification_evaluator(eval_x, evaluation.labels)
    result = finetune(build, pretrained, train_x, train.labels, evaluate, monitor=metric, model_dir=args.model_dir,
                      epochs=args.epochs, batch_size=args.batch_size, strategy=args.strategy,
                      learning_rate=args.learning_rate, seed=args.seed)
    model_dir = Path(args.model_dir)
    preprocessor.save(model_dir)
    task = {"task": "regression" if regression else "classification", "label_names": label_names,
            "max_length": args.max_length, "pair": train.pair_texts is not None, "metric": metric}
    (model_dir / TASK_FILE).write_text(json.dumps(task, indent=2), encoding="utf-8")
    return {"best_epoch": result.best_epoch, "scores": result.best_scores, "path": result.best_path, "metric": metric}


def run(args: argparse.Namespace) -> None:
    """`tfbert finetune`: fine-tune, then print the best epoch's scores and where the model went."""
    import_tensorflow_quietly()
    try:
        result = finetune_from_arguments(args)
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    scores = ", ".join(f"{name} {value:.4f}" for name, value in result["scores"].items())
    print(f"best epoch {result['best_epoch']}: {scores}; saved {result['path']}")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `finetune` subcommand to `tfbert`'s subparsers."""
    parser = add_command(
        commands, "finetune", "fine-tune a pretrained encoder for text classification or regression",
        "Fine-tune a pretrained encoder (a tfbert pretraining run, an encoder .keras file or a Hugging Face folder) "
        "for classification or regression on CSV/TSV/JSON Lines files or a GLUE task. The best epoch is kept in "
        "MODEL_DIR/best.keras, with preprocessor.json, tokenizer/ and task.json beside it, which tfbert export "
        "reads.",
        """
        tfbert finetune --pretrained runs/albert_tiny --train train.tsv --eval dev.tsv --model-dir runs/sst2
        tfbert finetune --pretrained all-MiniLM-L6-v2/ --train nli.csv --eval nli_dev.csv \\
            --text-columns premise hypothesis --label-names entailment neutral contradiction --model-dir runs/nli
        tfbert finetune --pretrained runs/bert --train sts.tsv --eval sts_dev.tsv --task regression --model-dir runs/sts
        tfbert finetune --pretrained runs/bert --glue sst2 --model-dir runs/sst2    # GLUE from TFDS
        tfbert export runs/sst2/best.keras --name sst2                             # then serve it
        """)
    parser.add_argument("--pretrained", required=True,
                        help="a tfbert pretraining run, an encoder .keras file, or a Hugging Face folder")
    parser.add_argument("--model-dir", required=True,
                        help="best.keras, best.json, preprocessor.json, tokenizer/ and task.json go here")
    parser.add_argument("--glue", help="a GLUE task from TensorFlow Datasets (sst2, mrpc, stsb, ...)")
    parser.add_argument("--train", help="CSV, TSV or JSON Lines file with text and label columns")
    parser.add_argument("--eval", help="the evaluation file, same columns")
    parser.add_argument("--task", choices=["classification", "regression"], default="classification",
                        help="classification (integer or --label-names labels) or regression (float scores)")
    parser.add_argument("--text-columns", nargs="+", default=["sentence"], help="one column, or two for pairs")
    parser.add_argument("--label-column", default="label")
    parser.add_argument("--label-names", nargs="+", help="class names, when labels are strings")
    parser.add_argument("--tokenizer", help="tokenizer folder (default: found beside --pretrained)")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--pooling", choices=["pooler", "mean", "cls"], default="pooler")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, help="peak learning rate (default 2e-5)")
    parser.add_argument("--strategy", default="auto", choices=["auto", "tpu", "gpu", "cpu", "multiworker"])
    parser.add_argument("--seed", type=int)
    parser.set_defaults(run=run)
    return parser
