"""`tfbert export`: write a TF Serving SavedModel (raw strings in) from a model, a pretraining run or an encoder,
or a TF Lite folder (`--format tflite`) for batch-1 latency on CPUs.

    tfbert export runs/sst2/best.keras --name sst2 --tokenizer minilm/ --labels negative,positive
    tfbert export runs/mnli/best.keras --name mnli --tokenizer vocab/ --pair --labels entailment,neutral,contradiction
    tfbert export runs/bert-tiny --name bert_tiny_fill_mask          # a `tfbert pretrain` model_dir: fill-mask
    tfbert export runs/korsts --name korsts                          # a finetune/distill model dir: unit-length embeddings
    tfbert export all-MiniLM-L6-v2/ --name minilm --hub-pair         # + TF Hub style preprocess/encoder pair
    tfbert export all-MiniLM-L6-v2/ --name minilm_lite --format tflite  # saved_models/minilm_lite/model.tflite
    tfbert export all-MiniLM-L6-v2/ --name minilm_int8 --format tflite --quantize dynamic   # int8 weights
"""

from __future__ import annotations

import argparse
import os
import zipfile
from typing import TYPE_CHECKING

from tfbert import artifacts
from tfbert.commands import add_command, add_overwrite_argument, flag_types
from tfbert.commands.errors import CommandError
from tfbert.commands.precision_flag import add_precision_argument, show_precision_choice
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.export.tflite_model import QUANTIZATIONS

if TYPE_CHECKING:
    from tfbert.artifacts import Artifact


# The options of a SavedModel export that a TF Lite export has no use for, by their flags.
SAVED_MODEL_ONLY = {"--version": "version", "--xla-max-batch": "xla_max_batch", "--hub-pair": "hub_pair",
                    "--top-k": "top_k", "--max-masks": "max_masks", "--max-answer-length": "max_answer_length",
                    "--doc-stride": "doc_stride", "--max-windows": "max_windows", "--languages": "languages"}


def _check_tflite_options(args: argparse.Namespace) -> None:
    """`--quantize` needs `--format tflite`, which refuses the SavedModel's options and a precision other than
    float32."""
    if args.format != "tflite":
        if args.quantize:
            raise CommandError("--quantize is for --format tflite (a SavedModel keeps float32 weights); add "
                               "--format tflite or leave --quantize out")
        return
    given = [flag for flag, name in SAVED_MODEL_ONLY.items() if getattr(args, name) not in (None, False)]
    if given:
        raise CommandError(f"{', '.join(given)}: not for --format tflite (a TF Lite export is one folder, "
                           "OUTPUT_DIR/NAME, serving classification, regression or embeddings); leave "
                           f"{'them' if len(given) > 1 else 'it'} out")
    if args.precision not in ("fp32", "float32"):
        raise CommandError(f"--precision {args.precision}: a TF Lite export computes in float32 (XNNPACK); "
                           "leave --precision out")


def run(args: argparse.Namespace) -> None:
    """`tfbert export`: check the arguments, then `export_saved_model` (and `export_hub_pair`) or `export_tflite`."""
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.export.saved_model` imports TensorFlow, kept out of `tfbert --help`
    import tensorflow as tf

    from tfbert.distribute.precision import apply_precision, pick_precision
    from tfbert.export.saved_model import check_version_free, export_hub_pair, export_saved_model

    _check_tflite_options(args)
    if not os.path.exists(args.source):
        raise CommandError(f"source {args.source!r} does not exist")
    if args.source.endswith(".keras") and os.path.isfile(args.source) and not zipfile.is_zipfile(args.source):
        raise CommandError(f"source {args.source!r} is not a .keras file (the zip archive model.save writes)")
    if args.version is not None:
        try:
            check_version_free(os.path.join(args.output_dir, args.name, str(args.version)), args.overwrite)
        except ValueError as error:
            raise CommandError(str(error)) from None
    try:
        source = artifacts.open(args.source)   # once; the export reads this Artifact
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    if args.tokenizer and not os.path.isdir(args.tokenizer):
        raise CommandError(f"--tokenizer {args.tokenizer!r} is not a folder")
    finetuned = source.task
    labels = [label.strip() for label in args.labels.split(",")] if args.labels else None
    labels = labels or finetuned.get("labels") or finetuned.get("label_names")
    pair = args.pair or finetuned.get("pair", False)
    options = {key: value for key, value in (("top_k", args.top_k), ("max_masks", args.max_masks),
                                             ("max_answer_length", args.max_answer_length),
                                             ("doc_stride", args.doc_stride), ("max_windows", args.max_windows))
               if value is not None}
    if args.format == "tflite":
        _export_tflite(args, source, labels, pair)
        return
    show_precision_choice()
    apply_precision(pick_precision(tf.distribute.get_strategy(), args.precision).policy)   # before the model loads
    try:
        path = export_saved_model(source, args.name, tokenizer=args.tokenizer, output_dir=args.output_dir,
                                  version=args.version, sequence_length=args.sequence_length, label_names=labels,
                                  pair=pair, pooling=args.pooling, task_options=options,
                                  languages=args.languages.split(",") if args.languages else None,
                                  overwrite=args.overwrite,
                                  xla_max_batch=args.xla_max_batch)
        print(f"wrote {path}")
        if args.hub_pair:
            for directory in export_hub_pair(source, args.name, tokenizer=args.tokenizer,
                                             output_dir=args.output_dir, version=int(path.name),
                                             sequence_length=args.sequence_length, pair=pair,
                                             overwrite=args.overwrite):
                print(f"wrote {directory}")
    except (FileNotFoundError, FileExistsError, ValueError, TypeError) as error:
        raise CommandError(str(error)) from None


def _export_tflite(args: argparse.Namespace, source: "Artifact", labels: list[str] | None, pair: bool) -> None:
    # Deferred (start-up): `tfbert.export.tflite` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.export.tflite import export_tflite

    try:
        path = export_tflite(source, args.name, tokenizer=args.tokenizer, output_dir=args.output_dir,
                             sequence_length=args.sequence_length, label_names=labels, pair=pair,
                             pooling=args.pooling, quantize=args.quantize, overwrite=args.overwrite)
    except (FileNotFoundError, FileExistsError, ValueError, TypeError) as error:
        raise CommandError(str(error)) from None
    print(f"wrote {path}")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `export` subcommand to `tfbert`'s subparsers."""
    examples = [line.strip() for line in __doc__.splitlines() if line.strip().startswith("tfbert export")]
    export = add_command(
        commands, "export", "write a TF Serving SavedModel that takes raw strings",
        "Write OUTPUT_DIR/NAME/VERSION/, a SavedModel whose serving_default takes raw strings (tokenizer, packing "
        "and model in one graph) for TF Serving. The task follows the model: classification, regression, token "
        "classification, question answering, embeddings (an encoder) or fill-mask (a pretraining run). With "
        "--format tflite, write OUTPUT_DIR/NAME/ instead: model.tflite (the model on token ids, open batch and "
        "length) beside its tokenizer, for classification, regression and embeddings. Try the export with "
        "tfbert predict.",
        "\n".join(examples + ['tfbert predict saved_models/sst2 "a gripping film"']))
    export.add_argument("source", help="a task model / PretrainingModel / encoder .keras file, a finetune or distill "
                                       "model dir, a pretraining run folder, an encoder folder or a Hugging Face "
                                       "checkpoint folder")
    export.add_argument("--name", required=True, type=flag_types.path_component,
                        help="model name: writes OUTPUT_DIR/NAME/VERSION/")
    export.add_argument("--output-dir", default="saved_models", help="default saved_models")
    export.add_argument("--format", choices=["saved_model", "tflite"], default="saved_model",
                        help="saved_model (default): TF Serving's NAME/VERSION/, raw strings in; tflite: NAME/ holding "
                             "model.tflite and its tokenizer, which tfbert predict runs with XNNPACK, faster at "
                             "batch 1 on CPUs (see docs/serving-latency.md)")
    export.add_argument("--quantize", choices=sorted(QUANTIZATIONS),
                        help="with --format tflite: dynamic stores int8 weights (float32 activations), about 4x "
                             "smaller and 2-3x faster on CPUs, outputs a little off float32's (measure on your task)")
    export.add_argument("--version", type=flag_types.version,
                        help="version folder (default: one more than the highest present)")
    export.add_argument("--tokenizer", help="tokenizer folder (default: the one beside SOURCE)")
    export.add_argument("--sequence-length", type=flag_types.sequence_length,
                        help="texts are packed and truncated to this (default: the length the model was trained "
                             "with, from its preprocessor.json, else 128)")
    export.add_argument("--labels", help="comma-separated class or tag names, in id order")
    export.add_argument("--pair", action="store_true", help="classification/regression on text pairs (text_pair input)")
    export.add_argument("--pooling", choices=["mean", "cls", "max", "mean_sqrt_len_tokens", "weightedmean", "lasttoken"],
                        help="embedding pooling of a bare encoder (default: the folder's, e.g. sentence-transformers' "
                             "1_Pooling, else mean)")
    export.add_argument("--top-k", type=flag_types.positive_int, help="fill-mask: tokens returned per mask (default 5)")
    export.add_argument("--max-masks", type=flag_types.positive_int,
                        help="fill-mask: mask tokens predicted per text; a text with more is an error (default 4)")
    export.add_argument("--max-answer-length", type=flag_types.positive_int,
                        help="question answering: longest answer in pieces (default 30)")
    export.add_argument("--doc-stride", type=flag_types.positive_int,
                        help="question answering: context pieces between window starts (default sequence length / 3)")
    export.add_argument("--max-windows", type=flag_types.positive_int,
                        help="question answering: windows read per context (default 16; the rest is not read)")
    export.add_argument("--languages", help="XLM with language embeddings: comma-separated names of the `language` "
                        "input, in id order (default: the checkpoint's lang2id, else 0,1,...)")
    export.add_argument("--xla-max-batch", type=flag_types.positive_int,
                        help="classification, regression, embeddings: requests of at most this many texts run an "
                             "XLA-compiled model at bucketed lengths, for batch-1 latency (TF Serving needs "
                             "--xla_cpu_compilation_enabled=true; see docs/serving-latency.md); default off")
    export.add_argument("--hub-pair", action="store_true",
                        help="also write NAME_preprocess/ and NAME_encoder/, TF Hub's preprocessing + encoder pair")
    add_precision_argument(export, default="fp32",
                           note="the SavedModel computes in this precision wherever it is served, so auto judges "
                                "this machine; outputs stay float32; default fp32")
    add_overwrite_argument(export, "replace an existing --version folder, whole, once the new one is complete "
                                   "(an export without --version takes the next version and never needs it)")
    export.set_defaults(run=run)
    return export
