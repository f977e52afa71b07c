"""Write tfbert models as Hugging Face `transformers` folders, and sentence embedders as sentence-transformers models.

The family's `HuggingFaceFormat` (in `tfbert.architectures`) is the weight-name map the loader
reads with; here it runs in reverse (`tfbert.convert.weights.export_weights`), so a checkpoint
loaded by `load_huggingface` and written again is equal tensor by tensor. What is written, by model:

| tfbert model | `config.json` `architectures` | loads with |
|---|---|---|
| `Encoder` | `BertModel`, `AlbertModel`, ... | `AutoModel` |
| a family's pretraining model | `BertForPreTraining`, `AlbertForPreTraining`, `RobertaForMaskedLM`, `XLMRobertaForMaskedLM`, `XLMWithLMHeadModel` | `AutoModelForPreTraining`, `AutoModelForMaskedLM` |
| `ElectraPretrainingModel` | `discriminator/`: `ElectraForPreTraining`, `generator/`: `ElectraForMaskedLM` | the same |
| `SequenceClassifier`, `SequenceRegressor` | `...ForSequenceClassification` (`id2label` from the labels) | `AutoModelForSequenceClassification` |
| `TokenClassifier`, `SpanExtractor`, `MultipleChoice` | `...ForTokenClassification`, `...ForQuestionAnswering`, `...ForMultipleChoice` | their `AutoModelFor...` |
| `SentenceEmbedder` | `...Model` + `modules.json`, `1_Pooling/`, `2_Normalize/` | `SentenceTransformer` |

Weights are `model.safetensors` (float32); the tokenizer files come from
`tfbert.convert.huggingface_tokenizer`.

Example:
    >>> write_huggingface(keras.models.load_model("runs/sst2/best.keras"), "hf/sst2", "bert", tokenizer,  # doctest: +SKIP
    ...                   label_names=["negative", "positive"])
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

import keras
import numpy as np

from tfbert import architectures
from tfbert.architectures import HuggingFaceFormat
from tfbert.architectures.spec import Assignment
from tfbert.config import EncoderConfig
from tfbert.convert.weights import dense as weights_dense
from tfbert.convert.weights import export_weights
from tfbert.models.encoder import Encoder

FORMAT = "huggingface"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
# sentence-transformers' module types, by the names every version of it reads.
TRANSFORMER_MODULE = "sentence_transformers.models.Transformer"
POOLING_MODULE = "sentence_transformers.models.Pooling"
NORMALIZE_MODULE = "sentence_transformers.models.Normalize"
# tfbert's pooling modes and sentence-transformers' Pooling flags.
POOLING_FLAGS = {"mean": "pooling_mode_mean_tokens", "cls": "pooling_mode_cls_token", "max": "pooling_mode_max_tokens"}
DEFAULT_MAX_SEQ_LENGTH = 128


@dataclasses.dataclass
class Checkpoint:
    """One Hugging Face model folder to write: `config.json` fields and the state dict.

    Attributes:
        subfolder: "" for the output folder itself, else a folder inside it (`generator`).
        config: the `config.json` mapping.
        tensors: checkpoint name -> array (`model.safetensors`).
        embedding: for sentence embedders, `(width, pooling, normalize)`; None otherwise.
    """

    subfolder: str
    config: dict[str, Any]
    tensors: dict[str, np.ndarray]
    embedding: tuple[int, str, bool] | None = None


def _float32(assignments: Iterable[Assignment]) -> dict[str, np.ndarray]:
    """The checkpoint tensors of `assignments` in float32, whatever the model's dtype policy."""
    return export_weights(assignments, np.float32)


def _config(entry: HuggingFaceFormat, encoder: EncoderConfig, class_name: str, **extra: Any) -> dict[str, Any]:
    return {"architectures": [class_name], "model_type": entry.model_type, **entry.write_config(encoder),
            "dtype": "float32", **extra}


def _without_pooler(assignments: Iterable[Assignment], prefix: str) -> list[Assignment]:
    return [assignment for assignment in assignments if not assignment[1] or not assignment[1][0].startswith(prefix)]


def _pretraining_checkpoints(model: keras.Model, spec, entry: HuggingFaceFormat) -> list[Checkpoint]:
    if entry.pretraining_checkpoints is not None:
        return [Checkpoint(folder, _config(entry, encoder, class_name), _float32(assignments))
                for folder, (encoder, class_name, assignments) in entry.pretraining_checkpoints(model).items()]
    if entry.head_weights is None or not entry.pretraining_class:
        raise ValueError(entry.no_heads or f"Hugging Face has no {spec.name} class with tfbert's pretraining heads")
    assignments = [*entry.encoder_weights(model.encoder, f"{entry.prefix}."), *entry.head_weights(model)]
    if not entry.pretraining_pooler:
        assignments = _without_pooler(assignments, f"{entry.prefix}.pooler")
    heads = entry.head_config(model) if entry.head_config else {}
    return [Checkpoint("", _config(entry, model.config.encoder, entry.pretraining_class, **heads),
                       _float32(assignments))]


def _labels(num_labels: int, label_names: Sequence[str] | None) -> dict[str, Any]:
    names = list(label_names) if label_names else [f"LABEL_{index}" for index in range(num_labels)]
    if len(names) != num_labels:
        raise ValueError(f"the model has {num_labels} classes but {len(names)} label names: {', '.join(names)}")
    return {"num_labels": num_labels, "id2label": dict(enumerate(names)),
            "label2id": {name: index for index, name in enumerate(names)},
            "problem_type": "single_label_classification"}


def _classifier_checkpoint(model: keras.Model, spec, entry: HuggingFaceFormat,
                           label_names: Sequence[str] | None) -> Checkpoint:
    from tfbert.tasks.models.classification import SequenceClassifier

    if entry.classifier_weights is None:
        raise ValueError(f"Hugging Face's {entry.class_prefix}ForSequenceClassification has a classification head "
                         f"unlike tfbert's dense layer; {spec.name} classifiers cannot be written")
    classifier = isinstance(model, SequenceClassifier)
    head = model.get_layer("classifier" if classifier else "regressor")
    labels = (_labels(model.options["num_classes"], label_names) if classifier
              else {"num_labels": 1, "problem_type": "regression"})
    assignments = entry.classifier_weights(model.encoder, head, model.options["pooling"])
    config = _config(entry, model.encoder.config, f"{entry.class_prefix}ForSequenceClassification", **labels)
    return Checkpoint("", config, _float32(assignments))


# tfbert task heads on the encoder's tokens or pooler that every family's Hugging Face task classes share:
# model class -> (Keras head layer, checkpoint name, class suffix, whether the class has the encoder's pooler).
TOKEN_HEADS = {"TokenClassifier": ("tagger", "classifier", "ForTokenClassification", False),
               "SpanExtractor": ("span", "qa_outputs", "ForQuestionAnswering", False),
               "MultipleChoice": ("scorer", "classifier", "ForMultipleChoice", True)}


def _token_head_checkpoint(model: keras.Model, entry: HuggingFaceFormat, label_names: Sequence[str] | None) -> Checkpoint:
    """Token classification, question answering (start/end logits) and multiple choice (a score on the pooler)."""
    layer, name, suffix, pooler = TOKEN_HEADS[type(model).__name__]
    encoder = model.encoder
    if pooler and (not encoder.config.pooler or model.options.get("pooling") != "pooler"):
        raise ValueError(f"Hugging Face's {entry.class_name(suffix)} scores the pooler output; this model's head reads "
                         f"{model.options.get('pooling')!r} pooling or its encoder has no pooler")
    assignments = [*entry.encoder_weights(encoder, f"{entry.prefix}."), *weights_dense(model.get_layer(layer), name)]
    if not pooler:
        assignments = _without_pooler(assignments, f"{entry.prefix}.pooler")
    extra = _labels(model.options["num_tags"], label_names) if "num_tags" in model.options else {}
    extra.pop("problem_type", None)
    return Checkpoint("", _config(entry, encoder.config, entry.class_name(suffix), **extra), _float32(assignments))


def huggingface_checkpoints(model: keras.Model, architecture: str,
                            label_names: Sequence[str] | None = None) -> list[Checkpoint]:
    """The Hugging Face checkpoint(s) of a tfbert model of family `architecture` (see the module notes).

    Raises `ValueError` with one line for a model or a configuration Hugging Face cannot hold.

    Example:
        >>> [checkpoint.config["architectures"] for checkpoint in huggingface_checkpoints(electra, "electra")]  # doctest: +SKIP
        [['ElectraForPreTraining'], ['ElectraForMaskedLM']]
    """
    from tfbert.tasks.models.classification import SequenceClassifier, SequenceRegressor
    from tfbert.tasks.models.embedding import SentenceEmbedder

    spec = architectures.get(architecture)
    entry = spec.format(FORMAT)
    if not entry.class_prefix:
        raise ValueError(f"writing {spec.name} models as Hugging Face folders is not supported yet: its Hugging Face "
                         "format names no transformers classes (class_prefix)")
    if isinstance(model, (Encoder, SentenceEmbedder)):
        encoder = model if isinstance(model, Encoder) else model.encoder
        config = _config(entry, encoder.config, f"{entry.class_prefix}Model")
        embedding = (None if isinstance(model, Encoder)
                     else (encoder.config.hidden_size, model.options["pooling"], model.options["normalize"]))
        return [Checkpoint("", config, _float32(entry.encoder_weights(encoder, "")), embedding)]
    if type(model).__name__ in spec.pretraining_models:
        return _pretraining_checkpoints(model, spec, entry)
    if isinstance(model, (SequenceClassifier, SequenceRegressor)):
        return [_classifier_checkpoint(model, spec, entry, label_names)]
    if type(model).__name__ in TOKEN_HEADS:
        return [_token_head_checkpoint(model, entry, label_names)]
    raise ValueError(f"a {type(model).__name__} has no Hugging Face equivalent tfbert writes; it writes encoders, "
                     f"pretraining models, sequence classifiers and regressors, token classifiers, span extractors, "
                     f"multiple-choice models and sentence embedders")


def _write_sentence_transformers(folder: Path, width: int, pooling: str, normalize: bool, max_length: int) -> None:
    """modules.json, sentence_bert_config.json, 1_Pooling/config.json and (when normalising) 2_Normalize/."""
    modules = [{"idx": 0, "name": "0", "path": "", "type": TRANSFORMER_MODULE},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": POOLING_MODULE}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": NORMALIZE_MODULE})
        (folder / "2_Normalize").mkdir()
    (folder / "modules.json").write_text(json.dumps(modules, indent=2), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": max_length, "do_lower_case": False}, indent=2), encoding="utf-8")
    (folder / "1_Pooling").mkdir()
    flags = {flag: mode == pooling for mode, flag in POOLING_FLAGS.items()}
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": width, **flags, "pooling_mode_mean_sqrt_len_tokens": False,
                    "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": False,
                    "include_prompt": True}, indent=2), encoding="utf-8")


def _write_checkpoint(checkpoint: Checkpoint, folder: Path, tokenizer, packing_style: str, max_length: int) -> None:
    from safetensors.numpy import save_file

    from tfbert.convert.huggingface_tokenizer import write_huggingface_tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    (folder / CONFIG_FILE).write_text(json.dumps(checkpoint.config, indent=2), encoding="utf-8")
    save_file(checkpoint.tensors, str(folder / WEIGHTS_FILE), metadata={"format": "pt"})
    if tokenizer is not None:
        write_huggingface_tokenizer(tokenizer, folder, packing_style)
    if checkpoint.embedding is not None:
        _write_sentence_transformers(folder, *checkpoint.embedding, max_length)


def write_huggingface(model: keras.Model, folder: str | Path, architecture: str, tokenizer=None,
                      label_names: Sequence[str] | None = None, max_length: int | None = None) -> list[Path]:
    """Writes `model` (of family `architecture`) and `tokenizer` as Hugging Face folder(s) under `folder`.

    `folder` must not exist (or be empty); it appears only when everything is written (a temporary
    folder beside it is renamed). Returns the model folders written (two for ELECTRA's pretraining
    model). `max_length` is a sentence embedder's `max_seq_length` (default 128).

    Example:
        >>> write_huggingface(load_pretrained_encoder("runs/bert"), "hf/bert", "bert", tokenizer)  # doctest: +SKIP
        [PosixPath('hf/bert')]
    """
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise FileExistsError(f"{folder} already exists; write to a new folder or remove it")
    checkpoints = huggingface_checkpoints(model, architecture, label_names)
    packing_style = architectures.get(architecture).packing_style
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}.partial-", dir=folder.parent))
    try:
        for checkpoint in checkpoints:
            _write_checkpoint(checkpoint, scratch / checkpoint.subfolder, tokenizer, packing_style,
                              max_length or DEFAULT_MAX_SEQ_LENGTH)
        if folder.exists():
            folder.rmdir()
        os.rename(scratch, folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [folder / checkpoint.subfolder if checkpoint.subfolder else folder for checkpoint in checkpoints]


@dataclasses.dataclass
class TfbertSource:
    """A tfbert model to write, with what the folder it came from says about it.

    Attributes:
        model: the Keras model (`Encoder`, pretraining model, task model).
        architecture: its family, or None where neither the model nor its folder says.
        tokenizer: the tokenizer found with it (None if none).
        label_names: a classifier's labels (`task.json`), if any.
        max_length: the sequence length it was fine-tuned with (`task.json`), if any.
    """

    model: keras.Model
    architecture: str | None
    tokenizer: Any
    label_names: Sequence[str] | None = None
    max_length: int | None = None


def _model_path(source: Path) -> Path:
    """The `.keras` file of a `.keras` path, a fine-tuning model dir or a pretraining run folder."""
    from tfbert.tasks.model_dir import is_model_dir, model_file

    if source.is_file() and source.suffix == ".keras":
        return source
    if is_model_dir(source):
        return model_file(source)
    for candidate in (source / "encoder.keras", source / "encoder" / "encoder.keras"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"{source}: expected a .keras file, a fine-tuning model dir (best.keras + task.json) or a "
                            "pretraining run folder (encoder/encoder.keras)")


def read_tfbert_source(source: str | Path, tokenizer=None) -> TfbertSource:
    """Loads the model of `source` (a `.keras` file, a `finetune` model dir or a `pretrain` run folder) with its
    family, tokenizer (`tokenizer` when given), labels and length.

    Example:
        >>> read_tfbert_source("runs/sst2").label_names  # doctest: +SKIP
        ['negative', 'positive']
    """
    import tfbert.tasks.models  # noqa: F401  (registers the task models for loading)
    from tfbert.config import ModelConfig
    from tfbert.tasks.model_dir import read_task
    from tfbert.tasks.pretrained import find_pretrained_tokenizer, pretrained_architecture

    source = Path(source)
    path = _model_path(source)
    model = keras.models.load_model(path, compile=False)
    config = getattr(model, "config", None)
    architecture = config.architecture if isinstance(config, ModelConfig) else pretrained_architecture(path)
    task = read_task(path)
    return TfbertSource(model, architecture, tokenizer if tokenizer is not None else find_pretrained_tokenizer(path),
                        task.get("label_names"), task.get("max_length"))
