"""What can be exported, and how it is found: task models, pretraining runs, encoders.

`resolve_source` turns a model in memory or a path into the Keras model that `serving_default`
calls, its `Encoder` (for the `encode` signature) and the serving task:

| source | task |
|---|---|
| `SequenceClassifier` | `classification` |
| `SequenceRegressor` | `regression` |
| `TokenClassifier` | `tagging` |
| `SpanExtractor` | `question_answering` |
| `SentenceEmbedder`, `SiameseEmbedder` (its `.embedder()`) | `embedding` |
| `PretrainingModel`, a pretraining run's folder (newest checkpoint) | `fill_mask` |
| `Encoder`, `encoder.keras`, a Hugging Face folder | `embedding` (mean pooling) |

Example:
    >>> source = resolve_source("runs/bert-base")       # a `tfbert pretrain` model_dir
    >>> source.task, type(source.model).__name__
    ('fill_mask', 'PretrainingModel')
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import keras
import tensorflow as tf

from tfbert.models.encoder import Encoder
from tfbert.models.pretraining import PretrainingModel
from tfbert.tasks.models import (MultipleChoice, SentenceEmbedder, SequenceClassifier, SequenceRegressor,
                                 SiameseEmbedder, SpanExtractor, TokenClassifier)
from tfbert.tasks.pretrained import find_pretrained_tokenizer, load_pretrained_encoder
from tfbert.text import load_tokenizer
from tfbert.text.base import Tokenizer

TASK_OF_MODEL = {
    SequenceClassifier: "classification",
    SequenceRegressor: "regression",
    TokenClassifier: "tagging",
    SpanExtractor: "question_answering",
    SentenceEmbedder: "embedding",
    PretrainingModel: "fill_mask",
}


@dataclasses.dataclass
class ExportSource:
    """The model `serving_default` calls, its encoder, the task, and the tokenizer if the source had one."""

    model: keras.Model
    encoder: Encoder
    task: str
    tokenizer: Tokenizer | None = None


def _from_model(model: keras.Model, pooling: str) -> ExportSource:
    if isinstance(model, SiameseEmbedder):
        model = model.embedder()
    if isinstance(model, Encoder):
        return ExportSource(SentenceEmbedder(model, pooling=pooling), model, "embedding")
    if isinstance(model, MultipleChoice):
        raise ValueError("MultipleChoice models are not exportable yet; export its encoder or a SequenceClassifier")
    for cls, task in TASK_OF_MODEL.items():
        if isinstance(model, cls):
            return ExportSource(model, model.encoder, task)
    raise ValueError(f"cannot export a {type(model).__name__}: expected a tfbert task model, PretrainingModel or Encoder")


def _from_pretraining_run(directory: Path) -> ExportSource:
    """The `PretrainingModel` of a `tfbert pretrain` run, restored from its newest checkpoint."""
    from tfbert.config import load_config

    checkpoint = tf.train.latest_checkpoint(str(directory))
    if checkpoint is None:
        raise FileNotFoundError(f"{directory}: a pretraining run folder with no checkpoint (ckpt-*) to restore "
                                "the masked-LM head from")
    model = PretrainingModel(load_config(str(directory / "config.yaml")))
    tf.train.Checkpoint(model=model).restore(checkpoint).expect_partial().assert_existing_objects_matched()
    return ExportSource(model, model.encoder, "fill_mask", load_tokenizer(directory / "tokenizer"))


def resolve_source(source: str | Path | keras.Model, pooling: str = "mean") -> ExportSource:
    """The model to serve, its encoder, the task and any tokenizer found beside a path (see the module notes).

    `pooling` is the embedding pooling used when the source is a bare encoder.
    """
    if isinstance(source, keras.Model):
        return _from_model(source, pooling)
    path = Path(source)
    if path.is_dir() and (path / "config.yaml").is_file() and (path / "tokenizer").is_dir():
        return _from_pretraining_run(path)
    if path.suffix == ".keras" and path.is_file():
        import tfbert.tasks.models  # noqa: F401  (registers the task classes for deserialization)

        resolved = _from_model(keras.models.load_model(path, compile=False), pooling)
    elif path.is_dir():
        resolved = _from_model(load_pretrained_encoder(path), pooling)
    else:
        raise FileNotFoundError(f"{path}: expected a .keras file, a pretraining run folder, an encoder folder "
                                "or a Hugging Face checkpoint folder")
    resolved.tokenizer = find_pretrained_tokenizer(path)
    return resolved
