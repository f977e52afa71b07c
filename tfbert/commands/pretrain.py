"""`tfbert pretrain`: pretrain any registered architecture on text files or TFDS; rerun to resume."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from tfbert import architectures
from tfbert.commands import add_command, add_overwrite_argument, flag_types
from tfbert.commands.backend_flag import add_backend_arguments
from tfbert.commands.errors import CommandError
from tfbert.commands.jit_flag import add_jit_compile_argument
from tfbert.commands.precision_flag import add_precision_argument, show_precision_choice
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.interrupts import Interrupted
from tfbert.outputs import run_folder
from tfbert.training.recipes import RECIPES, pretraining_recipes
from tfbert.training.settings import CPU_XLA_MIN_STEPS, TrainingSettings


def run(args: argparse.Namespace) -> None:
    """Loads the config, runs `tfbert.training.pretraining.pretrain` and says where the encoder went."""
    import_tensorflow_quietly()
    # Deferred (start-up): TensorFlow (tfbert.data's package too), after import_tensorflow_quietly; not for --help
    import tensorflow as tf
    from tfbert.data.input_checks import check_text_files
    from tfbert.data.text_decoding import LineDecoder
    from tfbert.training.no_data import NoTrainingData, no_data_message
    from tfbert.training.pretraining import pretrain
    from tfbert.training.pretraining_config import check_config_argument
    from tfbert.training.run_assets import remove_interrupted_writes
    from tfbert.training.write_failures import run_failure_message

    if os.path.exists(args.model_dir) and not os.path.isdir(args.model_dir):
        raise CommandError(f"--model-dir {args.model_dir!r} is a file; give a folder for checkpoints and the encoder")
    if args.config is None and args.init_from is None:
        raise CommandError("give --config (a shipped name, a YAML file or a Hugging Face config.json) for a model "
                           "from scratch, or --init-from SOURCE to start from an existing model")
    show_initialization()
    show_precision_choice()
    watcher = step_watcher()
    try:
        if args.config is not None:
            check_config_argument(args.config, args.sequence_length)
        decoder = LineDecoder(args.encoding_errors)
        check_text_files(args.data, decoder)
        data = args.data[0] if len(args.data) == 1 and args.data[0].startswith("tfds:") else args.data
        data = replaced_documents(data, decoder, args.line_by_line)
        with run_folder(args.model_dir, "pretrain", flag="--model-dir", overwrite=args.overwrite):
            remove_interrupted_writes(args.model_dir)
            model = pretrain(
                args.config, tokenizer=args.tokenizer, data=data, model_dir=args.model_dir,
                settings=TrainingSettings.from_flags(args), init_from=args.init_from, objectives=args.objectives,
                sequence_length=args.sequence_length, max_predictions=args.max_predictions,
                optimizer_recipe=args.optimizer, shuffle_buffer=args.shuffle_buffer, callbacks=[watcher],
                line_by_line=args.line_by_line, data_service=args.data_service,
                data_service_job=args.data_service_job,
            )
    except Interrupted as interrupted:
        interrupted.detail = interruption_detail(watcher.step(), args.model_dir)
        raise
    except NoTrainingData:
        raise CommandError(no_data_message(f"--data {' '.join(args.data)}")) from None
    except (OSError, ValueError, tf.errors.PermissionDeniedError, tf.errors.ResourceExhaustedError) as error:
        raise CommandError(run_failure_message(error, args.model_dir)) from None
    print(f"{steps_summary(int(model.optimizer.iterations), args.steps)}; encoder in "
          f"{args.model_dir}/encoder/encoder.keras ({model.encoder.count_params():,} parameters)")


def step_watcher():
    """A Keras callback that keeps the model `fit` trains, so `.step()` reads its optimizer's step (None before)."""
    import keras

    class StepWatcher(keras.callbacks.Callback):
        def step(self) -> int | None:
            model = getattr(self, "_model", None)
            return None if model is None else int(model.optimizer.iterations)

    return StepWatcher()


def interruption_detail(step: int | None, model_dir: str) -> str:
    """Where an interrupted run stopped and what rerunning it does, from the checkpoints `model_dir` holds."""
    # Deferred (start-up): it imports TensorFlow, which --help must not
    from tfbert.training.write_failures import last_complete_checkpoint

    where = "before training began" if step is None else f"at step {step}"
    latest = None if "://" not in model_dir and not os.path.isdir(model_dir) else last_complete_checkpoint(model_dir)
    if latest is None:
        return f"{where}, before the first checkpoint; nothing was kept: rerun the same command to start again"
    return f"{where}; rerun the same command to resume from {latest}"


def show_initialization() -> None:
    """Prints what `--init-from` kept and created (`tfbert.training.initialization` logs it)."""
    logger = logging.getLogger("tfbert.training.initialization")
    logger.handlers = [logging.StreamHandler(sys.stdout)]   # this run's stdout, not an earlier one's
    logger.propagate = False
    logger.setLevel(logging.INFO)


def replaced_documents(data, decoder, line_by_line: bool = False):
    """`data` as is, or with `--encoding-errors replace` and undecodable lines, its documents (lines with
    `--line-by-line`) with U+FFFD (reported)."""
    if not decoder.changed_lines:
        return data
    # Deferred (start-up): it imports TensorFlow, which --help must not
    from tfbert.data.readers import utf8_replaced_documents, utf8_replaced_lines

    print(f"tfbert pretrain: warning: {decoder.summary()}", file=sys.stderr)
    return utf8_replaced_lines(data) if line_by_line else utf8_replaced_documents(data)


def steps_summary(optimizer_steps: int, target: int) -> str:
    """What the run did, from the optimizer's own step count; raises CommandError when it made no step."""
    if optimizer_steps == 0:
        raise CommandError("the run made no optimizer step (no training examples came from --data); "
                           "check that the data files hold text")
    if optimizer_steps > target:
        return (f"nothing to do: the run is already at step {optimizer_steps}, past --steps {target}; "
                "give a larger --steps to train further")
    return f"trained to step {optimizer_steps} of {target}"


def objective_choices() -> str:
    """`bert: mlm | mlm,nsp; albert: ...`: the `--objectives` each architecture accepts (from the registry)."""
    return "; ".join(f"{name}: {' | '.join(architectures.get(name).choosable_objectives())}"
                     for name in architectures.names())


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `pretrain` subcommand to `tfbert`'s subparsers."""
    families = ", ".join(architectures.names())
    optimizers = ", ".join(f"{name} ({RECIPES[name].algorithm})" for name in pretraining_recipes())
    parser = add_command(
        commands, "pretrain", f"pretrain an encoder ({families}); rerun to resume",
        "Pretrain an encoder with its paper's objectives (MLM + NSP/SOP, replaced-token detection, span "
        f"boundaries, TLM; architectures: {families}) on text files or TensorFlow Datasets. Checkpoints go to "
        "--model-dir; rerunning the same command resumes from the newest one. The final encoder is "
        "MODEL_DIR/encoder/encoder.keras.",
        "  tfbert pretrain --config albert_tiny --tokenizer vocab/ --data corpus:web --steps 1000 --model-dir runs/a\n"
        "  tfbert pretrain --config bert_base --tokenizer vocab/ --data a.txt b.txt --steps 100000 \\\n"
        "      --model-dir gs://bucket/runs/bert --strategy tpu --steps-per-execution 200\n"
        "  tfbert pretrain --config my_model.yaml --tokenizer vocab/ --data tfds:wikipedia/20230601.en ...\n"
        "  tfbert pretrain --init-from albert-base-v2/ --objectives mlm --data domain.txt --steps 10000 "
        "--model-dir runs/further\n")
    parser.add_argument("--config", help="a shipped config name (tfbert configs), a YAML file or a Hugging Face "
                                         "config.json; vocab_size comes from the tokenizer (default: --init-from's)")
    parser.add_argument("--tokenizer", help="tokenizer folder (tfbert vocab writes one; default: --init-from's); one "
                                            "extending --init-from's vocabulary grows the token table")
    parser.add_argument("--init-from", metavar="SOURCE",
                        help="start from this model's weights: a Hugging Face folder, a .keras file, a pretraining "
                             "run folder, a finetune model dir or a Google TF1 release folder; its heads are kept")
    parser.add_argument("--objectives", help=f"objectives to train, among the architecture's: "
                                             f"{objective_choices()}; default: the paper's")
    parser.add_argument("--data", required=True, nargs="+",
                        help="text files (a sentence a line, blank line between documents), corpus:web "
                             "(the bundled corpus), tfds:NAME, or for XLM tlm:SRC,TGT / mlm:A,B / clm:A,B")
    parser.add_argument("--model-dir", required=True, help="checkpoints, logs and the final encoder go here")
    parser.add_argument("--steps", required=True, type=flag_types.positive_int, help="total training steps")
    parser.add_argument("--batch-size", type=flag_types.positive_int, default=32, help="global batch size (default 32)")
    add_backend_arguments(parser)
    parser.add_argument("--sequence-length", type=flag_types.sequence_length, default=128)
    parser.add_argument("--max-predictions", type=flag_types.positive_int, default=20,
                        help="masked positions per sequence")
    parser.add_argument("--optimizer", choices=pretraining_recipes(),
                        help=f"optimizer recipe: {optimizers}; default: the config's pretraining recipe, else "
                             "the architecture's paper")
    parser.add_argument("--learning-rate", type=flag_types.learning_rate,
                        help="peak learning rate (default: the config's pretraining recipe, else the paper's)")
    parser.add_argument("--warmup-steps", type=flag_types.non_negative_int,
                        help="warm-up steps (default: the config's pretraining recipe, else the paper's)")
    parser.add_argument("--checkpoint-every", type=flag_types.positive_int, default=1000)
    parser.add_argument("--steps-per-execution", type=flag_types.positive_int, default=1,
                        help="steps per host call (TPU: 100+)")
    parser.add_argument("--seed", type=flag_types.seed)
    add_precision_argument(parser)
    add_jit_compile_argument(parser, auto=f"on, except on a CPU for bfloat16, for replicas on several CPU devices "
                                          f"and for runs under {CPU_XLA_MIN_STEPS} steps")
    parser.add_argument("--encoding-errors", choices=["strict", "replace"], default="strict",
                        help="bytes in --data text files that are not UTF-8: strict (an error naming the file and "
                             "line) or replace (by U+FFFD, reporting how many lines changed)")
    parser.add_argument("--shuffle-buffer", type=flag_types.non_negative_int, default=1000,
                        help="documents, then examples, are shuffled with buffers of this many (0: corpus order)")
    parser.add_argument("--line-by-line", action="store_true",
                        help="each non-blank line of the --data text files is one example, cut to "
                             "--sequence-length (as Hugging Face's LineByLineTextDataset); MLM-type objectives only")
    parser.add_argument("--data-service", metavar="grpc://HOST:PORT",
                        help="run the input pipeline on this tf.data service dispatcher's workers (start them with "
                             "python -m tfbert.data.service dispatcher|worker); files are shared out dynamically")
    parser.add_argument("--data-service-job", metavar="NAME",
                        help="the tf.data service job to join (default: one of this run's own, recorded in "
                             "--model-dir, so no other run gets its data); give the same NAME to the trainers that "
                             "share one epoch")
    add_overwrite_argument(parser, "start a new run in --model-dir whatever it holds, deleting the old one once the "
                                   "new run has a checkpoint (without it a pretraining run there is resumed and "
                                   "anything else refused)")
    parser.set_defaults(run=run)
    return parser
