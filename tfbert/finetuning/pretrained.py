"""The pretrained encoder to fine-tune, its tokenizer and its preprocessor, for Python callers: each a field of
the opened `tfbert.artifacts.Artifact` (a `.keras` file, a folder tfbert wrote, a Hugging Face,
sentence-transformers, TF1 or keras-hub folder). Each function takes a path, which it opens, or an `Artifact`
a command opened once and hands down (`Artifact.tokenizer`, `.preprocessor_with`, `.load_encoder`,
`.hidden_size`, `.with_tokenizer` are the methods); only `.keras` files and encoder folders in a bucket
(`gs://...`) are read here.

Example:
    >>> encoder = load_pretrained_encoder("runs/bert")     # a `tfbert pretrain` run
    >>> load_pretrained_preprocessor("all-MiniLM-L6-v2/", sequence_length=256).packing_style
    'bert'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import keras

import tfbert.keras_classes
from tfbert import artifacts
from tfbert.artifacts.layout import ENCODER_FILE, RUN_ENCODER_FILE
from tfbert.models.encoder import Encoder

if TYPE_CHECKING:
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.text.base import Tokenizer

Source = str | Path | artifacts.Artifact


def opened(source: Source) -> artifacts.Artifact:
    """`source` itself where it is an `Artifact`, else `tfbert.artifacts.open(source)`."""
    return source if isinstance(source, artifacts.Artifact) else artifacts.open(source)


def load_pretrained_encoder(source: Source | Encoder, dtype: str | None = None) -> Encoder:
    """The `Encoder` of `source` with its pretrained weights: an `Encoder`, an `Artifact`, anything
    `tfbert.artifacts.open` reads, or a `.keras` file / encoder folder in a bucket (`gs://...`).

    Example:
        >>> encoder = load_pretrained_encoder("runs/bert/encoder")
        >>> encoder = load_pretrained_encoder("gs://my-bucket/runs/albert_base")  # doctest: +SKIP
    """
    if isinstance(source, Encoder):
        return source
    if not isinstance(source, artifacts.Artifact) and "://" in str(source):
        return _load_remote_encoder(str(source))
    return opened(source).load_encoder(dtype=dtype)


def pretrained_hidden_size(source: Source | Encoder) -> int | None:
    """The hidden size of `source`'s encoder where it is known without loading weights (`Artifact.hidden_size`)."""
    if isinstance(source, Encoder):
        return source.config.hidden_size
    if not isinstance(source, artifacts.Artifact) and "://" in str(source):
        return None
    return opened(source).hidden_size


def _load_remote_encoder(url: str) -> Encoder:
    """A `.keras` file, an encoder folder or a pretraining run folder in a bucket (Keras copies the file locally)."""
    import tensorflow as tf

    tfbert.keras_classes.import_all()
    url = url.rstrip("/")
    candidates = [url] if url.endswith(".keras") else [f"{url}/{ENCODER_FILE}", f"{url}/{RUN_ENCODER_FILE}"]
    for candidate in candidates:
        if tf.io.gfile.exists(candidate):
            model = keras.models.load_model(candidate, compile=False)
            encoder = model if isinstance(model, Encoder) else getattr(model, "encoder", None)
            if not isinstance(encoder, Encoder):
                raise ValueError(f"{candidate} holds a {type(model).__name__} with no tfbert encoder")
            return encoder
    raise FileNotFoundError(f"{url}: expected a .keras file, or a folder with {ENCODER_FILE} or {RUN_ENCODER_FILE}")


def load_pretrained_tokenizer(source: Source) -> "Tokenizer":
    """The `tfbert.text` tokenizer that goes with a pretrained model or a tokenizer folder (`Artifact.tokenizer`).

    Example:
        >>> tokenizer = load_pretrained_tokenizer("all-MiniLM-L6-v2/")   # WordPieceTokenizer, uncased
        >>> tokenizer = load_pretrained_tokenizer("runs/bert")    # the run's tokenizer/
    """
    return opened(source).require_tokenizer()


def load_pretrained_preprocessor(source: Source, tokenizer: "Tokenizer | None" = None,
                                 sequence_length: int | None = None) -> "Preprocessor":
    """The `Preprocessor` that goes with a pretrained model, for fine-tuning it (no masking): the artifact's
    tokenizer, packing style and length (`Artifact.preprocessor_with`), `tokenizer` and `sequence_length`
    replacing them where given.

    Example:
        >>> preprocessor = load_pretrained_preprocessor("all-MiniLM-L6-v2/", sequence_length=256)
        >>> preprocessor.packing_style, preprocessor.sequence_length
        ('bert', 256)
    """
    return opened(source).preprocessor_with(tokenizer, sequence_length)
