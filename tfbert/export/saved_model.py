"""`export_saved_model`: a tfbert model and its tokenizer to `saved_models/NAME/VERSION/` for TF Serving.

Example:
    >>> path = export_saved_model("runs/sst2", "sst2", output_dir="exports")   # a `tfbert finetune` folder
    >>> path
    PosixPath('exports/sst2/1')
    >>> sorted(tf.saved_model.load(str(path)).signatures)
    ['encode', 'preprocess', 'serving_default', 'tokenize']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import keras
import tensorflow as tf

from tfbert import artifacts
from tfbert.artifacts.checks import check_tokenizer_fits
from tfbert.artifacts.layout import EXPORT_METADATA_FILE as METADATA_FILE
from tfbert.artifacts.layout import SAVED_MODEL_EXTRA
from tfbert.artifacts.manifest import preprocessor_fields, write_manifest
from tfbert.artifacts.saved_models import next_version_number
from tfbert.data.preprocessor import DEFAULT_SEQUENCE_LENGTH, Preprocessor
from tfbert.export.compiled import SmallBatchCompilation
from tfbert.export.module import EncoderModule, PreprocessingModule, ServingModule
from tfbert.export.ops import check_servable
from tfbert.export.sources import ExportSource, resolve_source
from tfbert.export.tasks import (Classification, Embedding, FillMask, MultipleChoice, QuestionAnswering, Regression,
                                 ServingTask, Tagging)
from tfbert.outputs import OutputExists, is_remote, locked, new_output
from tfbert.text.base import Tokenizer
from tfbert.text.loading import as_tokenizer

# The tasks whose outputs are one per text, which `xla_max_batch` compiles (`tfbert.export.compiled`).
COMPILED_TASKS = ("classification", "regression", "embedding")


def next_version(model_root: str | Path) -> int:
    """One more than the highest numeric version folder under `model_root` (1 for a new model).

    TF Serving serves the highest version, so a new export replaces the old one without a restart.
    """
    return next_version_number(model_root)


def serving_task(task: str, model: keras.Model, label_names, pair: bool, options: dict,
                 compilation: SmallBatchCompilation | None = None) -> ServingTask:
    """The `ServingTask` that serves `model` as `task` (`tfbert.export.tasks`), its label or tag names checked."""
    if compilation is not None and task not in COMPILED_TASKS:
        raise ValueError(f"xla_max_batch applies to {', '.join(COMPILED_TASKS)} exports, not {task}; leave it out")
    if task == "classification":
        names = label_names or [str(index) for index in range(model.options["num_classes"])]
        if len(names) != model.options["num_classes"]:
            raise ValueError(f"{len(names)} label names for {model.options['num_classes']} classes")
        return Classification(names, pair=pair, compilation=compilation)
    if task == "regression":
        return Regression(pair=pair, compilation=compilation)
    if task == "embedding":
        return Embedding(pair=False, compilation=compilation)
    if task == "tagging":
        names = label_names or [str(index) for index in range(model.options["num_tags"])]
        if len(names) != model.options["num_tags"]:
            raise ValueError(f"{len(names)} tag names for {model.options['num_tags']} tags")
        return Tagging(names)
    if task == "question_answering":
        return QuestionAnswering(**options)
    if task == "multiple_choice":
        return MultipleChoice()
    return FillMask(**options)


def _as_tokenizer(tokenizer: Tokenizer | str | Path | None, found: Tokenizer | None) -> Tokenizer:
    tokenizer = as_tokenizer(tokenizer)
    if tokenizer is None:
        tokenizer = found
    if tokenizer is None:
        raise ValueError("no tokenizer found beside the model; pass tokenizer= (a folder written by save_assets)")
    return tokenizer


def export_preprocessor(resolved: ExportSource, tokenizer: Tokenizer | str | Path | None = None,
                        sequence_length: int | None = None) -> Preprocessor:
    """The `Preprocessor` an export serves with: the source's (`tfbert.artifacts`: its saved tokenizer,
    packing style and length), with `tokenizer` and `sequence_length` replacing its own where given;
    128 tokens where the source says no length."""
    length = sequence_length or resolved.sequence_length or DEFAULT_SEQUENCE_LENGTH
    config = resolved.encoder.config
    length = min(length, config.max_sequence_length) if not sequence_length else length
    if length > config.max_sequence_length:
        raise ValueError(f"sequence_length {length} exceeds the encoder's {config.max_sequence_length} positions")
    chosen = _as_tokenizer(tokenizer, resolved.tokenizer)
    check_tokenizer_fits(chosen.vocabulary_size(), None, config.to_dict(),
                         f"--tokenizer {tokenizer}" if tokenizer is not None else "the tokenizer beside the model",
                         "the model")
    return Preprocessor(chosen, length, packing_style=resolved.packing_style(), architecture=resolved.architecture)


def export_saved_model(
    source: "str | Path | keras.Model | artifacts.Artifact",
    name: str,
    *,
    tokenizer: Tokenizer | str | Path | None = None,
    output_dir: str | Path = "saved_models",
    version: int | None = None,
    sequence_length: int | None = None,
    label_names: Sequence[str] | None = None,
    pair: bool = False,
    pooling: str | None = None,
    task_options: dict | None = None,
    languages: Sequence[str] | None = None,
    overwrite: bool = False,
    xla_max_batch: int | None = None,
) -> Path:
    """Writes `output_dir/name/version/`, a SavedModel taking raw strings (see `tfbert.export.module`).

    Args:
        source: a task model, `PretrainingModel` or `Encoder` (in memory or `.keras`), a
            pretraining run folder, an encoder folder or a Hugging Face checkpoint folder.
        tokenizer: a `tfbert.text` tokenizer or its folder; by default the one beside `source`.
        version: TF Serving's version folder; the next free number by default.
        sequence_length: the fixed length texts are packed (and truncated) to; by default the
            length of the preprocessor saved with the model (`preprocessor.json`), else 128.
        label_names: class names (classification) or tag names (tagging); `"0"`, `"1"`, ... by default.
        pair: classification / regression take `text_pair` too (sentence-pair tasks such as MNLI).
        pooling: embedding pooling when `source` is a bare encoder (default: the folder's, else mean).
        task_options: `QuestionAnswering` (`max_answer_length`, `max_question_length`, `allow_no_answer`,
            `no_answer_threshold`, `doc_stride`, `max_windows`) or `FillMask` (`top_k`, `max_masks`) options.
        languages: for an encoder with language embeddings (XLM, `n_langs > 1`), the names of the
            `language` input in id order; by default the Hugging Face folder's `lang2id`, else "0", "1", ...
        overwrite: replace an existing `version` (by default refused: TF Serving versions are immutable).
        xla_max_batch: classification, regression and embedding: batches of at most this many texts run
            an XLA-compiled model at bucketed lengths (`tfbert.export.compiled`), for batch-1 latency;
            TF Serving then needs `--xla_cpu_compilation_enabled=true`. Off by default.

    The version folder is written under a temporary name and renamed when complete (`tfbert.outputs`).
    Returns the version folder.
    """
    resolved = resolve_source(source, pooling=pooling)
    config = resolved.encoder.config
    if config.position_ids_input:
        raise ValueError("encoders with a position_ids input are not exportable yet")
    if languages and not config.num_languages:
        raise ValueError("languages given for an encoder without language embeddings; leave them out")
    preprocessor = export_preprocessor(resolved, tokenizer, sequence_length)
    compilation = SmallBatchCompilation(xla_max_batch) if xla_max_batch else None
    task = serving_task(resolved.task, resolved.model, label_names, pair, dict(task_options or {}), compilation)
    task.check(preprocessor)
    if config.num_languages:
        task.with_languages(_language_names(resolved, languages, config.num_languages))
    module = ServingModule(task, resolved.model, resolved.encoder, preprocessor, pair_preprocess=pair)
    root = Path(output_dir) / name
    with locked(root, flag="--name"):   # one export of NAME at a time picks a version
        target = root / str(version if version is not None else next_version(root))
        with version_folder(target, overwrite) as staging:
            tf.saved_model.save(module, staging, signatures=module.signatures())
            check_servable(Path(staging))
            write_export_metadata(Path(staging) / SAVED_MODEL_EXTRA, "export", task, preprocessor, pair, resolved,
                                  signatures=("serving_default", "tokenize", "preprocess", "encode"))
    return target


def version_folder(target: Path, overwrite: bool = False):
    """`new_output` for a version folder: built under a temporary name (TF Serving skips it) and renamed, so a
    stopped export leaves no version and its rerun writes the same number; an existing version only with
    `overwrite`."""
    check_version_free(target, overwrite)
    return new_output(target, flag="--version", overwrite=overwrite, lock=False)


def check_version_free(target: str | Path, overwrite: bool = False) -> None:
    """Raises OutputExists for an existing version folder, unless `overwrite`."""
    target = Path(target)
    if target.exists() and not overwrite and not is_remote(target):
        raise OutputExists(f"{target} already exists (TF Serving versions are immutable); give another --version, "
                           "or add --overwrite to replace it")


def _language_names(resolved: ExportSource, languages: Sequence[str] | None, count: int) -> list[str]:
    """`languages`, else the source's (`Artifact.language_names`: a Hugging Face XLM folder's `lang2id`), else
    "0", "1", ..."""
    if languages is None and resolved.artifact is not None:
        languages = resolved.artifact.language_names
    names = [str(name) for name in languages] if languages is not None else [str(index) for index in range(count)]
    if len(names) != count or len(set(names)) != count:
        raise ValueError(f"{len(names)} language names {names} for an encoder with {count} languages; give one "
                         "distinct name per language, in id order")
    return names


def write_export_metadata(folder: Path, kind: str, task: ServingTask, preprocessor: Preprocessor, pair: bool,
                          resolved: ExportSource, signatures: Sequence[str],
                          extra: dict | None = None) -> None:
    """What an export is, beside its model: `METADATA_FILE` (task, inputs, label names, sequence length,
    `signatures`, and `extra`: a TF Lite export's `quantization`), the manifest `tfbert.json` (`kind`) and
    the preprocessor with its tokenizer (`Preprocessor.load(folder)`), for people and clients. A SavedModel keeps them in `assets.extra/`,
    which TF Serving ignores; a TF Lite export beside `model.tflite`."""
    preprocessor.save(folder)
    metadata = {**task.metadata(), "sequence_length": preprocessor.sequence_length, "pair_preprocess": pair,
                "signatures": list(signatures), **(extra or {})}
    (folder / METADATA_FILE).write_text(json.dumps(metadata, indent=2), encoding="utf-8")
    options = getattr(resolved.model, "options", {}) if resolved.task == "embedding" else {}
    write_manifest(folder, kind, family=resolved.architecture, config=resolved.encoder.config.to_dict(),
                   preprocessor=preprocessor_fields(preprocessor),
                   task={"task": resolved.task, "labels": metadata.get("label_names") or metadata.get("tag_names"),
                         "pair": pair, **{key: options[key] for key in ("pooling", "normalize") if key in options}},
                   command="export", **_source_fields(resolved.artifact))


def _source_fields(artifact: "artifacts.Artifact | None") -> dict:
    """The manifest's source (path, kind, step) of what was exported; none for an in-memory model."""
    if artifact is None:
        return {}
    fields = artifacts.source_fields(artifact)
    return {**fields, "step": fields["source_step"]}


def export_hub_pair(
    source: "str | Path | keras.Model | artifacts.Artifact",
    name: str,
    *,
    tokenizer: Tokenizer | str | Path | None = None,
    output_dir: str | Path = "saved_models",
    version: int = 1,
    sequence_length: int | None = None,
    pair: bool = False,
    overwrite: bool = False,
) -> tuple[Path, Path]:
    """TF Hub's pair: `NAME_preprocess/VERSION` (strings to ids) and `NAME_encoder/VERSION` (ids to outputs).

    Fine-tuning on a TPU runs the first in `tf.data` on the host and the second on the TPU. Both follow
    TF Hub's text API too (`tfbert.export.hub_text`): `hub.KerasLayer(preprocess_dir)`, `.tokenize`,
    `.bert_pack_inputs` and `hub.KerasLayer(encoder_dir, trainable=True)` work as with TF Hub's BERT models;
    a source with a masked-LM head (a pretraining model or run) gives the encoder an `mlm` sub-object.

    Example:
        >>> preprocess_dir, encoder_dir = export_hub_pair("runs/bert", "bert", output_dir="exports")
        >>> preprocess = tf.saved_model.load(str(preprocess_dir)); encoder = tf.saved_model.load(str(encoder_dir))
        >>> encoder.encode(**preprocess.preprocess(tf.constant(["hello"])))["pooled_output"].shape
        TensorShape([1, 128])
    """
    resolved = resolve_source(source)
    preprocessor = export_preprocessor(resolved, tokenizer, sequence_length)
    preprocessing = PreprocessingModule(preprocessor, pair=pair)
    encoding = EncoderModule(resolved.encoder, resolved.model if resolved.task == "fill_mask" else None)
    preprocess_dir = Path(output_dir) / f"{name}_preprocess" / str(version)
    encoder_dir = Path(output_dir) / f"{name}_encoder" / str(version)
    for directory, module in ((preprocess_dir, preprocessing), (encoder_dir, encoding)):
        with locked(directory.parent, flag="--name"), version_folder(directory, overwrite) as staging:
            tf.saved_model.save(module, staging, signatures=module.signatures())
            check_servable(Path(staging))
    return preprocess_dir, encoder_dir
