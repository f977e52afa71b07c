"""What can be exported, and how it is found: task models, pretraining runs, encoders.

`resolve_source` turns a model in memory or a path (read by `tfbert.artifacts.open`) into the Keras
model that `serving_default` calls, its `Encoder` (for the `encode` signature), the serving task and
the `Artifact` that says how to preprocess (tokenizer, packing style, length) and pool:

| source | task |
|---|---|
| `SequenceClassifier` | `classification` |
| `SequenceRegressor` | `regression` |
| `TokenClassifier` | `tagging` |
| `SpanExtractor` | `question_answering` |
| `MultipleChoice` | `multiple_choice` |
| `SentenceEmbedder`, `SiameseEmbedder` / `EmbeddingDistiller` (their `.embedder()`) | `embedding` |
| a pretraining model whose architecture exports `fill_mask` (`tfbert.architectures`), a pretraining run's folder (newest checkpoint) | `fill_mask` |
| `Encoder`, `encoder.keras`, a Hugging Face, sentence-transformers, TF1 or keras-hub folder | `embedding` (the folder's pooling and normalisation, else mean pooling) |

Example:
    >>> source = resolve_source("runs/bert")       # a `tfbert pretrain` model_dir
    >>> source.task, type(source.model).__name__
    ('fill_mask', 'PretrainingModel')
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import keras

from tfbert import architectures, artifacts
from tfbert.artifacts import Artifact
from tfbert.config import ModelConfig
from tfbert.models.encoder import Encoder
from tfbert.models.tasks import (EmbeddingDistiller, MultipleChoice, SentenceEmbedder, SequenceClassifier,
                                 SequenceRegressor, SiameseEmbedder, SpanExtractor, TokenClassifier)
from tfbert.text.base import Tokenizer

DEFAULT_POOLING = "mean"

TASK_OF_MODEL = {
    SequenceClassifier: "classification",
    SequenceRegressor: "regression",
    TokenClassifier: "tagging",
    SpanExtractor: "question_answering",
    MultipleChoice: "multiple_choice",
    SentenceEmbedder: "embedding",
}


@dataclasses.dataclass
class ExportSource:
    """The model `serving_default` calls, its encoder and the task; the `Artifact` it came from (None for a
    model in memory), which says how its text is preprocessed.
    """

    model: keras.Model
    encoder: Encoder
    task: str
    artifact: Artifact | None = None

    @property
    def architecture(self) -> str | None:
        if self.artifact is not None and self.artifact.family:
            return self.artifact.family
        return self.encoder.architecture

    @property
    def tokenizer(self) -> Tokenizer | None:
        return self.artifact.tokenizer if self.artifact is not None else None

    @property
    def sequence_length(self) -> int | None:
        return self.artifact.sequence_length if self.artifact is not None else None

    def packing_style(self) -> str:
        """The artifact's packing style (saved preprocessor, else family), else the encoder's family's or layout's."""
        if self.artifact is not None:
            return self.artifact.packing_style
        if self.encoder.architecture:
            return architectures.get(self.encoder.architecture).packing_style
        return "roberta" if self.encoder.config.position_offset else "bert"


def _pretraining_task(model: keras.Model, artifact: Artifact | None = None) -> ExportSource:
    """A pretraining model (it carries a `ModelConfig`): served as its architecture's `export_tasks` say."""
    spec = architectures.get(model.config.architecture)
    if "fill_mask" not in spec.export_tasks:
        raise ValueError(f"a {spec.name} pretraining model has no fill-mask head to serve; export its encoder "
                         "(model.encoder) for embeddings, or fine-tune it")
    return ExportSource(model, model.encoder, "fill_mask", artifact)


def _from_model(model: keras.Model, pooling: str | None, normalize: bool = False,
                artifact: Artifact | None = None) -> ExportSource:
    if isinstance(model, (SiameseEmbedder, EmbeddingDistiller)):
        model = model.embedder(normalize=normalize)
    if isinstance(model, Encoder):
        embedder = SentenceEmbedder(model, pooling=pooling or DEFAULT_POOLING, normalize=normalize)
        return ExportSource(embedder, model, "embedding", artifact)
    for cls, task in TASK_OF_MODEL.items():
        if isinstance(model, cls):
            return ExportSource(model, model.encoder, task, artifact)
    if isinstance(getattr(model, "config", None), ModelConfig) and isinstance(getattr(model, "encoder", None), Encoder):
        return _pretraining_task(model, artifact)
    raise ValueError(f"cannot export a {type(model).__name__}: expected a tfbert task model, pretraining model "
                     "or Encoder")


def resolve_source(source: str | Path | keras.Model | Artifact, pooling: str | None = None) -> ExportSource:
    """The model to serve, its encoder, the task and the artifact read from a path (see the module notes).

    `pooling` replaces the embedding pooling of a bare encoder (default: the folder's, e.g. a
    sentence-transformers `1_Pooling`, else mean); a folder that normalises its embeddings
    (sentence-transformers' `Normalize`, a distilled student) is served normalised.
    """
    if isinstance(source, keras.Model):
        return _from_model(source, pooling)
    artifact = source if isinstance(source, Artifact) else artifacts.open(source)
    if artifact.kind in artifacts.EXPORT_KINDS:
        raise ValueError(f"{source} is already an export ({artifact.kind}); export the model it came from "
                         f"({(artifact.manifest or {}).get('provenance', {}).get('source') or 'its source'})")
    task = artifact.task
    model = artifact.load_model() if artifact.model_file is not None or artifact.kind == "pretraining-run" \
        else artifact.load_encoder()
    return _from_model(model, pooling or task.get("pooling"), bool(task.get("normalize")), artifact)
