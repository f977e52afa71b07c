"""What can be exported, and how it is found: task models, pretraining runs, encoders.

`resolve_source` turns a model in memory or a path into the Keras model that `serving_default`
calls, its `Encoder` (for the `encode` signature), the serving task and what it finds about
the preprocessing: a saved `Preprocessor` (`preprocessor.json`), the tokenizer, the architecture:

| source | task |
|---|---|
| `SequenceClassifier` | `classification` |
| `SequenceRegressor` | `regression` |
| `TokenClassifier` | `tagging` |
| `SpanExtractor` | `question_answering` |
| `MultipleChoice` | `multiple_choice` |
| `SentenceEmbedder`, `SiameseEmbedder` / `EmbeddingDistiller` (their `.embedder()`) | `embedding` |
| a pretraining model whose architecture exports `fill_mask` (`tfbert.architectures`), a pretraining run's folder (newest checkpoint) | `fill_mask` |
| `Encoder`, `encoder.keras`, a Hugging Face folder | `embedding` (mean pooling) |

Example:
    >>> source = resolve_source("runs/bert-base")       # a `tfbert pretrain` model_dir  # doctest: +SKIP
    >>> source.task, type(source.model).__name__  # doctest: +SKIP
    ('fill_mask', 'PretrainingModel')
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import keras
import tensorflow as tf

from tfbert import architectures
from tfbert.config import ModelConfig, load_config
from tfbert.data.preprocessor import Preprocessor, encoder_packing_style, find_saved_preprocessor
from tfbert.models.encoder import Encoder
from tfbert.tasks.models import (EmbeddingDistiller, MultipleChoice, SentenceEmbedder, SequenceClassifier,
                                 SequenceRegressor, SiameseEmbedder, SpanExtractor, TokenClassifier)
from tfbert.tasks.pretrained import find_pretrained_tokenizer, load_pretrained_encoder, pretrained_architecture
from tfbert.text import load_tokenizer
from tfbert.text.base import Tokenizer

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
    """The model `serving_default` calls, its encoder and the task; what the source says about preprocessing.

    `preprocessor` is one saved beside the source; `tokenizer` one found beside it; `architecture`
    the family when the source names it (a pretraining model or run, a Hugging Face folder).
    """

    model: keras.Model
    encoder: Encoder
    task: str
    tokenizer: Tokenizer | None = None
    architecture: str | None = None
    preprocessor: Preprocessor | None = None

    def packing_style(self) -> str:
        """The packing style of the saved preprocessor, else of the architecture, else of the encoder's layout."""
        if self.preprocessor is not None:
            return self.preprocessor.packing_style
        if self.architecture is not None:
            return architectures.get(self.architecture).packing_style
        return encoder_packing_style(self.encoder.config.position_offset)


def _pretraining_task(model: keras.Model) -> ExportSource:
    """A pretraining model (it carries a `ModelConfig`): served as its architecture's `export_tasks` say."""
    spec = architectures.get(model.config.architecture)
    if "fill_mask" not in spec.export_tasks:
        raise ValueError(f"a {spec.name} pretraining model has no fill-mask head to serve; export its encoder "
                         "(model.encoder) for embeddings, or fine-tune it")
    return ExportSource(model, model.encoder, "fill_mask", architecture=spec.name)


def _from_model(model: keras.Model, pooling: str) -> ExportSource:
    if isinstance(model, (SiameseEmbedder, EmbeddingDistiller)):
        model = model.embedder()
    if isinstance(model, Encoder):
        return ExportSource(SentenceEmbedder(model, pooling=pooling), model, "embedding")
    for cls, task in TASK_OF_MODEL.items():
        if isinstance(model, cls):
            return ExportSource(model, model.encoder, task)
    if isinstance(getattr(model, "config", None), ModelConfig) and isinstance(getattr(model, "encoder", None), Encoder):
        return _pretraining_task(model)
    raise ValueError(f"cannot export a {type(model).__name__}: expected a tfbert task model, pretraining model "
                     "or Encoder")


def _from_pretraining_run(directory: Path) -> ExportSource:
    """The pretraining model of a `tfbert pretrain` run, restored from its newest checkpoint."""
    checkpoint = tf.train.latest_checkpoint(str(directory))
    if checkpoint is None:
        raise FileNotFoundError(f"{directory}: a pretraining run folder with no checkpoint (ckpt-*) to restore "
                                "the masked-LM head from")
    config = load_config(str(directory / "config.yaml"))
    resolved = _pretraining_task(architectures.get(config.architecture).build_pretraining_model(config))
    tf.train.Checkpoint(model=resolved.model).restore(checkpoint).expect_partial().assert_existing_objects_matched()
    resolved.tokenizer = load_tokenizer(directory / "tokenizer")
    if find_saved_preprocessor(directory) == directory:
        resolved.preprocessor = Preprocessor.load(directory, tokenizer=resolved.tokenizer)
    return resolved


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
    saved = find_saved_preprocessor(path)
    if saved is not None:
        resolved.preprocessor = Preprocessor.load(saved)
    resolved.architecture = resolved.architecture or pretrained_architecture(path)
    resolved.tokenizer = find_pretrained_tokenizer(path)
    return resolved
