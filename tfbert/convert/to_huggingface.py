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
    >>> from tfbert.text import load_tokenizer
    >>> tokenizer = load_tokenizer("runs/sst2/tokenizer")
    >>> write_huggingface(keras.models.load_model("runs/sst2/best.keras"), "hf/sst2", "bert", tokenizer,
    ...                   label_names=["negative", "positive"])
    [PosixPath('hf/sst2')]
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

from tfbert import architectures, artifacts
from tfbert.architectures import HuggingFaceFormat
from tfbert.architectures.spec import Assignment
from tfbert.artifacts.checks import check_tokenizer_fits
from tfbert.artifacts.layout import HUGGINGFACE_CONFIG_FILE as CONFIG_FILE
from tfbert.artifacts.sentence_transformers import (DEFAULT_MAX_SEQ_LENGTH, SentenceTransformersLayout,
                                                    write_sentence_transformers)
from tfbert.config import EncoderConfig
from tfbert.convert.weights import dense as weights_dense
from tfbert.convert.weights import export_weights
from tfbert.models.encoder import Encoder
from tfbert.models.family import FamilyPretrainingModel
from tfbert.models.tasks.classification import SequenceClassifier, SequenceRegressor
from tfbert.models.tasks.embedding import SentenceEmbedder

FORMAT = "huggingface"
WEIGHTS_FILE = "model.safetensors"


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
        >>> [checkpoint.config["architectures"] for checkpoint in huggingface_checkpoints(electra, "electra")]   # an ElectraPretrainingModel  # doctest: +SKIP
        [['ElectraForPreTraining'], ['ElectraForMaskedLM']]
    """
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
    if isinstance(model, FamilyPretrainingModel):
        return _pretraining_checkpoints(model, spec, entry)
    if isinstance(model, (SequenceClassifier, SequenceRegressor)):
        return [_classifier_checkpoint(model, spec, entry, label_names)]
    if type(model).__name__ in TOKEN_HEADS:
        return [_token_head_checkpoint(model, entry, label_names)]
    raise ValueError(f"a {type(model).__name__} has no Hugging Face equivalent tfbert writes; it writes encoders, "
                     f"pretraining models, sequence classifiers and regressors, token classifiers, span extractors, "
                     f"multiple-choice models and sentence embedders")


def _write_checkpoint(checkpoint: Checkpoint, folder: Path, tokenizer, packing_style: str, max_length: int) -> None:
    # Deferred (start-up): the tokenizer writer imports TensorFlow; `huggingface_checkpoints` needs only Keras
    from safetensors.numpy import save_file

    from tfbert.convert.huggingface_tokenizer import write_huggingface_tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    (folder / CONFIG_FILE).write_text(json.dumps(checkpoint.config, indent=2), encoding="utf-8")
    save_file(checkpoint.tensors, str(folder / WEIGHTS_FILE), metadata={"format": "pt"})
    if tokenizer is not None:
        write_huggingface_tokenizer(tokenizer, folder, packing_style=packing_style)
    if checkpoint.embedding is not None:
        width, pooling, normalize = checkpoint.embedding
        write_sentence_transformers(folder, width, SentenceTransformersLayout(pooling, normalize, max_length))


def write_huggingface(model: keras.Model, folder: str | Path, architecture: str, tokenizer=None,
                      label_names: Sequence[str] | None = None, max_length: int | None = None) -> list[Path]:
    """Writes `model` (of family `architecture`) and `tokenizer` as Hugging Face folder(s) under `folder`.

    `folder` must not exist (or be empty); it appears only when everything is written (a temporary
    folder beside it is renamed). Returns the model folders written (two for ELECTRA's pretraining
    model). `max_length` is a sentence embedder's `max_seq_length` (default 128).

    Example:
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder, load_pretrained_tokenizer
        >>> write_huggingface(load_pretrained_encoder("runs/bert"), "hf/bert", "bert", load_pretrained_tokenizer("runs/bert"))
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


def read_tfbert_source(source: str | Path, tokenizer=None) -> TfbertSource:
    """Loads the model of `source` (a `.keras` file, a `finetune` model dir, a `pretrain` run folder or a converted
    checkpoint, read by `tfbert.artifacts.open`) with its family, tokenizer (`tokenizer` when given), labels and
    length; an encoder whose folder says it embeds sentences (a converted sentence-transformers model) comes as a
    `SentenceEmbedder` with its pooling and normalisation.

    Example:
        >>> read_tfbert_source("runs/sst2").label_names
        ['negative', 'positive']
    """
    artifact = artifacts.open(source)
    if artifact.kind in artifacts.EXPORT_KINDS:
        origin = ((artifact.manifest or {}).get("provenance") or {}).get("source") or "the model it was exported from"
        raise ValueError(f"{source} is an export ({artifact.kind}), which keeps no Keras model to convert; give "
                         f"the model it was exported from ({origin}) to tfbert convert to-huggingface")
    if artifact.kind in ("huggingface", "tf1", "keras-hub"):
        raise ValueError(f"{source} is a {artifact.kind} folder, not a tfbert model; convert it to .keras first "
                         f"(tfbert convert {artifact.kind} {source} -o model.keras)")
    if artifact.source_format != "tfbert" or artifact.kind == "vocab":
        raise ValueError(f"{source} is a {artifact.kind} folder, which holds no model; give a .keras file, a "
                         "finetune model dir or a pretraining run")
    if tokenizer is not None:
        check_tokenizer_fits(tokenizer.vocabulary_size(), None, artifact.config or {}, "--tokenizer", str(source))
    model = artifact.load_encoder() if artifact.kind == "pretraining-run" else artifact.load_model()
    task = artifact.task
    if isinstance(model, Encoder) and task.get("task") == "embedding":
        model = SentenceEmbedder(model, pooling=task.get("pooling") or "mean", normalize=bool(task.get("normalize")))
    return TfbertSource(model, artifact.family, tokenizer if tokenizer is not None else artifact.tokenizer,
                        task.get("labels") or task.get("label_names"), artifact.sequence_length)
