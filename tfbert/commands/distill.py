"""`tfbert distill`: multilingual knowledge distillation of sentence embeddings (Reimers & Gurevych 2020).

    tfbert distill --teacher all-MiniLM-L6-v2/ --student runs/korsts --parallel en-ko.tsv --model-dir runs/ko
    tfbert distill --teacher runs/en-sbert --student xlmr-base/ --parallel en.txt ko.txt --eval dev-en-ko.tsv \\
        --model-dir runs/xlmr-ko --epochs 5 --batch-size 64
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tfbert import artifacts
from tfbert.commands import add_command, add_overwrite_argument, flag_types
from tfbert.commands.backend_flag import add_backend_arguments
from tfbert.commands.errors import CommandError
from tfbert.commands.finetune import find_tokenizer
from tfbert.commands.jit_flag import FINETUNE_AUTO_JIT, add_jit_compile_argument
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.outputs import new_output
from tfbert.training.settings import TrainingSettings

DEFAULT_EVAL_PAIRS = 1000


def _split(args: argparse.Namespace):
    """Training and evaluation pairs: --eval's, else the last pairs of --parallel (at most 1000, a tenth)."""
    # Deferred (start-up): `tfbert.finetuning.distillation` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.finetuning.distillation import read_parallel

    sources, targets = read_parallel(args.parallel)
    if args.eval:
        return (sources, targets), read_parallel(args.eval)
    held_out = min(DEFAULT_EVAL_PAIRS, len(sources) // 10)
    if held_out < 2:
        raise CommandError(f"{len(sources)} parallel pairs are too few to hold out evaluation pairs; give --eval")
    return (sources[:-held_out], targets[:-held_out]), (sources[-held_out:], targets[-held_out:])


def _student(args: argparse.Namespace):
    """The opened student (`tfbert.artifacts.open`, once), its tokenizer and pooling (a model dir or a
    sentence-transformers folder keeps its own)."""
    student = Path(args.student)
    if not student.exists():
        raise CommandError(f"student {args.student!r} does not exist")
    artifact = artifacts.open(student)
    pooling = artifact.task.get("pooling") or args.pooling
    return artifact, find_tokenizer(artifact, args.tokenizer), pooling


def run(args: argparse.Namespace) -> None:
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.finetuning.distillation` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.inference.text_models import load_text_embedder
    from tfbert.finetuning.distillation import distill, vocabulary_coverage
    from tfbert.finetuning.model_dir import write_model_dir_manifest

    try:
        with new_output(args.model_dir, flag="--model-dir", overwrite=args.overwrite) as model_dir:
            (sources, targets), (eval_sources, eval_targets) = _split(args)
            student, tokenizer, pooling = _student(args)
            for side, texts in (("target", targets), ("source", sources)):
                warning = vocabulary_coverage(tokenizer, texts).warning(side)
                if warning:
                    print(f"tfbert distill: warning: {warning}", file=sys.stderr)
            teacher = load_text_embedder(args.teacher, max_length=args.max_length)
            result = distill(teacher, student, tokenizer, sources, targets, model_dir, eval_sources=eval_sources,
                             eval_targets=eval_targets, pooling=pooling, max_length=args.max_length,
                             settings=TrainingSettings.from_flags(args))
            write_model_dir_manifest(model_dir, source=student)
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    result.best_path = str(Path(args.model_dir) / Path(result.best_path).name)
    scores = result.best_scores
    print(f"best epoch {result.best_epoch} on {len(eval_sources)} evaluation pairs: MSE {scores['mse']:.6f}, "
          f"translation accuracy source->target {scores['source_to_target_accuracy']:.4f}, "
          f"target->source {scores['target_to_source_accuracy']:.4f}; saved {result.best_path}")


def add_parser(commands) -> argparse.ArgumentParser:
    parser = add_command(
        commands, "distill", "multilingual distillation: a student learns a teacher's sentence embeddings",
        "Multilingual knowledge distillation (Reimers & Gurevych 2020): the student learns to give a source sentence "
        "and its translation the teacher's embedding of the source (mean squared error; the teacher's embeddings "
        "are computed once). Reports the MSE and translation retrieval accuracy both ways on the evaluation pairs "
        "after every epoch, keeps the best, and writes an embedding model dir (export and evaluate take it). "
        "Warns first when the student's tokenizer does not cover the target (or source) language.",
        "\n".join(line[4:] for line in __doc__.splitlines() if line.startswith("    ")))
    parser.add_argument("--teacher", required=True,
                        help="embedding model dir, .keras file, encoder or Hugging Face folder, or SavedModel")
    parser.add_argument("--student", required=True,
                        help="encoder to train: a model dir, .keras file, pretraining run or Hugging Face folder")
    parser.add_argument("--parallel", required=True, nargs="+",
                        help="source<TAB>target lines, or two aligned files (source, target)")
    parser.add_argument("--eval", nargs="+", help="evaluation pairs, same forms (default: the last 1000 pairs, "
                                                  "at most a tenth, of --parallel)")
    parser.add_argument("--model-dir", required=True, help="best.keras, tokenizer/ and task.json go here")
    parser.add_argument("--tokenizer", help="the student's tokenizer folder (default: found beside --student)")
    parser.add_argument("--pooling", default="mean",
                        choices=["mean", "cls", "max", "mean_sqrt_len_tokens", "weightedmean", "lasttoken"],
                        help="the student's pooling (default mean; a model dir or sentence-transformers folder keeps "
                             "its own)")
    parser.add_argument("--max-length", type=flag_types.sequence_length, default=128)
    parser.add_argument("--epochs", type=flag_types.positive_int, default=3)
    parser.add_argument("--batch-size", type=flag_types.positive_int, default=32)
    parser.add_argument("--learning-rate", type=flag_types.learning_rate, help="peak learning rate (default 2e-5)")
    add_backend_arguments(parser)
    parser.add_argument("--seed", type=flag_types.seed)
    add_jit_compile_argument(parser, auto=FINETUNE_AUTO_JIT)
    add_overwrite_argument(parser)
    parser.set_defaults(run=run)
    return parser
