"""Any tfbert model as a function of raw texts: `embed(texts)` for bi-encoders, `score(texts, pairs)` for
cross-encoders, whether it is a model dir, a `.keras` file, an encoder folder or an exported SavedModel.

| source | embedder | cross-encoder |
|---|---|---|
| model dir (`task.json` + `best.keras` + `tokenizer/`) | `finetune --task embedding`, `distill` | `finetune --task regression` |
| `.keras` file (tokenizer found beside it) | `SentenceEmbedder`, `SiameseEmbedder`, an encoder | `SequenceRegressor` |
| encoder folder, pretraining run, Hugging Face folder | the encoder with `pooling` | - |
| SavedModel from `tfbert export` | `serving_default`: `text` -> `embedding` | `text`, `text_pair` -> `score` |

Example:
    >>> embedder = load_text_embedder("all-MiniLM-L6-v2/")
    >>> embedder.embed(["한국어 문장", "another sentence"]).shape
    (2, 384)
    >>> load_cross_encoder("runs/sts-cross").score(["a man plays"], ["a man is playing"])  # fine-tuned for minutes  # doctest: +SKIP
    array([4.61], dtype=float32)
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Protocol, Sequence

import keras
import numpy as np
import tensorflow as tf

from tfbert import artifacts
from tfbert.artifacts import Artifact
from tfbert.data.text_lists import text_list
from tfbert.export.client import SavedModelClient
from tfbert.finetuning.features import encode_texts
from tfbert.finetuning.finetune import check_length_fits
from tfbert.models.tasks import SentenceEmbedder, SequenceRegressor
from tfbert.text import load_tokenizer

DEFAULT_MAX_LENGTH = 128
# Batches are cut to their longest text, rounded up to this many positions (few shapes to trace).
LENGTH_BUCKET = 16


class TextEmbedder(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """`[len(texts), dim]` float32 embeddings."""


class CrossEncoder(Protocol):
    def score(self, texts: Sequence[str], pair_texts: Sequence[str]) -> np.ndarray:
        """`[len(texts)]` float32 scores of each pair."""


class _KerasTextModel:
    """A Keras model on the features of `encode_texts`, run in batches of similar length."""

    def __init__(self, model: keras.Model, tokenizer, max_length: int = DEFAULT_MAX_LENGTH, batch_size: int = 64):
        """`tokenizer` is the model's `Preprocessor` (its packing style) or a `tfbert.text` tokenizer (the packing
        style of its special tokens, `tfbert.data.packing.packing_style_of`)."""
        self.model, self.max_length, self.batch_size = model, max_length, batch_size
        self.tokenizer = tokenizer
        self._call = tf.function(lambda inputs: model(inputs, training=False), reduce_retracing=True)

    def _run(self, output: str, texts: Sequence[str], pair_texts: Sequence[str] | None = None) -> np.ndarray:
        texts = text_list(texts)
        if not len(texts):
            raise ValueError("no texts to run the model on")
        features = encode_texts(self.tokenizer, texts, pair_texts, max_length=self.max_length)
        lengths = features["padding_mask"].sum(axis=1)
        encoder = getattr(self.model, "encoder", None)
        if encoder is not None:
            check_length_fits(int(lengths.max()), encoder.config.max_sequence_length)
        order = np.argsort(-lengths, kind="stable")
        results = []
        for start in range(0, len(order), self.batch_size):
            rows = order[start:start + self.batch_size]
            width = min(self.max_length, LENGTH_BUCKET * math.ceil(int(lengths[rows].max()) / LENGTH_BUCKET))
            batch = {name: tf.constant(values[rows, :width]) for name, values in features.items()}
            results.append(np.asarray(self._call(batch)[output], np.float32))
        values = np.concatenate(results)
        return finite_outputs(values[np.argsort(order, kind="stable")], output, texts)


class KerasEmbedder(_KerasTextModel):
    """`embed(texts)` with a `SentenceEmbedder`-like model (output `embedding`).

    Example:
        >>> from tfbert.config import load_config
        >>> from tfbert.models.encoder import build_encoder
        >>> from tfbert.text import WordPieceTokenizer
        >>> encoder = build_encoder(load_config("bert_tiny").encoder)
        >>> KerasEmbedder(SentenceEmbedder(encoder), WordPieceTokenizer("vocab.txt")).embed(["hello"]).shape
        (1, 128)
    """

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._run("embedding", texts)


class KerasCrossEncoder(_KerasTextModel):
    """`score(texts, pair_texts)` with a `SequenceRegressor` (output `score`)."""

    def score(self, texts: Sequence[str], pair_texts: Sequence[str]) -> np.ndarray:
        return self._run("score", texts, pair_texts).reshape(-1)


class _SavedModelTextModel:
    """The `serving_default` signature of a `tfbert export` SavedModel (or of one on TF Serving: a
    `tfbert.export.signatures.RestServer` or `GrpcServer`), called in batches through `SavedModelClient`."""

    def __init__(self, source, batch_size: int = 64):
        self.client = SavedModelClient(source)
        self.path = self.client.path
        self.batch_size = batch_size

    def _run(self, output: str, **inputs: Sequence[str]) -> np.ndarray:
        outputs = sorted(self.client.signature.output_shapes)
        if output not in outputs:
            raise ValueError(f"{self.path}: serving_default returns {', '.join(outputs)}, not {output!r}; "
                             f"expected a SavedModel exported from a model with a {output!r} output")
        inputs = {name: text_list(values, name) for name, values in inputs.items()}
        count = len(next(iter(inputs.values())))
        results = [self.client.outputs({name: values[start:start + self.batch_size]
                                        for name, values in inputs.items()})[output]
                   for start in range(0, count, self.batch_size)]
        values = np.concatenate(results).astype(np.float32) if results else np.zeros((0,), np.float32)
        return finite_outputs(values, output, inputs["text"])


def finite_outputs(values: np.ndarray, output: str, texts: Sequence[str]) -> np.ndarray:
    """`values` (one row per text), or `ValueError` naming the first text whose `output` is NaN or infinite."""
    bad = np.flatnonzero(~np.isfinite(values.reshape(len(values), -1)).all(axis=1))
    if bad.size:
        text = texts[bad[0]]
        raise ValueError(f"the model gave a non-finite {output} for text {bad[0] + 1} ({text[:40]!r}) and "
                         f"{bad.size - 1} other(s): its weights are not finite (a run that diverged); retrain it "
                         "with a lower learning rate")
    return values


class SavedModelEmbedder(_SavedModelTextModel):
    """`embed(texts)` with an exported embedding SavedModel (`text` -> `embedding`)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._run("embedding", text=texts)


class SavedModelCrossEncoder(_SavedModelTextModel):
    """`score(texts, pair_texts)` with an exported regression SavedModel (`text`, `text_pair` -> `score`)."""

    def score(self, texts: Sequence[str], pair_texts: Sequence[str]) -> np.ndarray:
        return self._run("score", text=texts, text_pair=pair_texts).reshape(-1)


def _preprocessor_of(artifact: Artifact, tokenizer, max_length: int | None):
    """The artifact's `Preprocessor` (its packing style), with `tokenizer` (a folder or tokenizer) where given."""
    if isinstance(tokenizer, (str, Path)):
        tokenizer = load_tokenizer(tokenizer)
    return artifact.preprocessor_with(tokenizer, max_length or artifact.sequence_length or DEFAULT_MAX_LENGTH)


def _embedding_model(artifact: Artifact, pooling: str) -> keras.Model:
    if artifact.model_file is not None:
        model = artifact.load_model()
        if isinstance(model, SentenceEmbedder):
            return model
        if hasattr(model, "embedder"):
            return model.embedder(normalize=True)
    return SentenceEmbedder(artifact.load_encoder(), pooling=artifact.task.get("pooling") or pooling,
                            normalize=bool(artifact.task.get("normalize")))


def _open_existing(source: str | Path, what: str) -> tuple[Path, artifacts.Artifact]:
    """`source` as a path and its opened artifact; a missing path is refused naming `what` it should have been."""
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"{what} {str(path)!r} does not exist")
    return path, artifacts.open(path)


def load_text_embedder(source: str | Path, *, pooling: str = "mean", max_length: int | None = None,
                       tokenizer=None, batch_size: int = 64) -> TextEmbedder:
    """`source` (see the module table; read by `tfbert.artifacts.open`) as a `TextEmbedder`.

    `pooling` applies to bare encoders whose folder names none; `max_length` defaults to the
    artifact's length, else 128.

    Example:
        >>> load_text_embedder("runs/bert").embed(["hello"]).shape      # a pretraining run, mean pooling
        (1, 128)
    """
    path, artifact = _open_existing(source, "model")
    if artifact.kind in artifacts.EXPORT_KINDS:
        return SavedModelEmbedder(path, batch_size)
    task = artifact.task.get("task")
    if artifact.kind == "model-dir" and task != "embedding":
        raise ValueError(f"{path} is a {task} model dir, not an embedding model; evaluate a "
                         "regression model with --cross-encoder")
    preprocessor = _preprocessor_of(artifact, tokenizer, max_length)
    return KerasEmbedder(_embedding_model(artifact, pooling), preprocessor, preprocessor.sequence_length, batch_size)


def load_cross_encoder(source: str | Path, *, max_length: int | None = None, tokenizer=None,
                       batch_size: int = 64) -> CrossEncoder:
    """A regression model (`tfbert finetune --task regression` model dir, `.keras` or SavedModel) as a `CrossEncoder`,
    fed by its own preprocessor (a RoBERTa cross-encoder packs pairs RoBERTa-style).

    Example:
        >>> load_cross_encoder("runs/sts-cross").score(["a man plays"], ["a man is playing"])  # fine-tuned for minutes  # doctest: +SKIP
        array([4.61], dtype=float32)
    """
    path, artifact = _open_existing(source, "cross-encoder")
    if artifact.kind in artifacts.EXPORT_KINDS:
        return SavedModelCrossEncoder(path, batch_size)
    model = artifact.load_model() if artifact.model_file is not None else None
    if not isinstance(model, SequenceRegressor):
        found = type(model).__name__ if model is not None else f"a {artifact.kind} with no .keras model"
        raise ValueError(f"{path}: expected a regression model (tfbert finetune --task regression writes one), "
                         f"found {found}")
    preprocessor = _preprocessor_of(artifact, tokenizer, max_length)
    return KerasCrossEncoder(model, preprocessor, preprocessor.sequence_length, batch_size)
