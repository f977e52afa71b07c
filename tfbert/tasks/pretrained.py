"""The pretrained encoder to fine-tune, its tokenizer and its preprocessor, for Python callers: each a field of
`tfbert.artifacts.open(source)` (a `.keras` file, a folder tfbert wrote, a Hugging Face, sentence-transformers,
TF1 or keras-hub folder); only `.keras` files and encoder folders in a bucket (`gs://...`) are read here.

Example:
    >>> encoder = load_pretrained_encoder("runs/bert")     # a `tfbert pretrain` run
    >>> load_pretrained_preprocessor("all-MiniLM-L6-v2/", sequence_length=256).packing_style
    'bert'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import keras

from tfbert import artifacts
from tfbert.models.encoder import Encoder

if TYPE_CHECKING:
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.text.base import Tokenizer


def load_pretrained_encoder(source: str | Path | Encoder, dtype: str | None = None) -> Encoder:
    """The `Encoder` of `source` with its pretrained weights: an `Encoder`, anything `tfbert.artifacts.open`
    reads, or a `.keras` file / encoder folder in a bucket (`gs://...`).

    Example:
        >>> encoder = load_pretrained_encoder("runs/bert/encoder")
        >>> encoder = load_pretrained_encoder("gs://my-bucket/runs/albert_base")  # doctest: +SKIP
    """
    if isinstance(source, Encoder):
        return source
    if "://" in str(source):
        return _load_remote_encoder(str(source))
    return artifacts.open(source).load_encoder(dtype=dtype)


def pretrained_hidden_size(source: str | Path | Encoder) -> int | None:
    """The hidden size of `source`'s encoder where its files say it without loading weights (an `Encoder`'s
    config, a tfbert folder's or `.keras` file's, a Hugging Face `config.json`), else None.

    Example:
        >>> pretrained_hidden_size("all-MiniLM-L6-v2/")
        384
    """
    if isinstance(source, Encoder):
        return source.config.hidden_size
    if "://" in str(source):
        return None
    config = artifacts.open(source).config or {}
    return config.get("hidden_size")


def _load_remote_encoder(url: str) -> Encoder:
    """A `.keras` file, an encoder folder or a pretraining run folder in a bucket (Keras copies the file locally)."""
    import tensorflow as tf

    import tfbert.keras_classes

    tfbert.keras_classes.import_all()
    url = url.rstrip("/")
    candidates = [url] if url.endswith(".keras") else [f"{url}/encoder.keras", f"{url}/encoder/encoder.keras"]
    for candidate in candidates:
        if tf.io.gfile.exists(candidate):
            model = keras.models.load_model(candidate, compile=False)
            encoder = model if isinstance(model, Encoder) else getattr(model, "encoder", None)
            if not isinstance(encoder, Encoder):
                raise ValueError(f"{candidate} holds a {type(model).__name__} with no tfbert encoder")
            return encoder
    raise FileNotFoundError(f"{url}: expected a .keras file, or a folder with encoder.keras or encoder/encoder.keras")


def find_pretrained_tokenizer(source: str | Path) -> "Tokenizer | None":
    """`load_pretrained_tokenizer(source)`, or None where no tokenizer goes with `source`."""
    try:
        return artifacts.open(source).tokenizer
    except (OSError, ValueError):
        return None


def load_pretrained_tokenizer(source: str | Path) -> "Tokenizer":
    """The `tfbert.text` tokenizer that goes with a pretrained model or a tokenizer folder (`Artifact.tokenizer`).

    Example:
        >>> tokenizer = load_pretrained_tokenizer("all-MiniLM-L6-v2/")   # WordPieceTokenizer, uncased
        >>> tokenizer = load_pretrained_tokenizer("runs/bert")    # the run's tokenizer/
    """
    return artifacts.open(source).require_tokenizer()


def pretrained_architecture(source: str | Path) -> str | None:
    """The architecture family `source` says it is (`Artifact.family`), or None.

    Example:
        >>> pretrained_architecture("runs/bert/encoder/encoder.keras")
        'bert'
    """
    return artifacts.open(source).family


def load_pretrained_preprocessor(source: str | Path, tokenizer: "Tokenizer | None" = None,
                                 sequence_length: int | None = None) -> "Preprocessor":
    """The `Preprocessor` that goes with a pretrained model, for fine-tuning it (no masking): the artifact's
    tokenizer, packing style and length (`Artifact.preprocessor_with`), `tokenizer` and `sequence_length`
    replacing them where given.

    Example:
        >>> preprocessor = load_pretrained_preprocessor("all-MiniLM-L6-v2/", sequence_length=256)
        >>> preprocessor.packing_style, preprocessor.sequence_length
        ('bert', 256)
    """
    return artifacts.open(source).preprocessor_with(tokenizer, sequence_length)


def encoder_for_tokenizer(source: str | Path, tokenizer: "Tokenizer", scratch: Path) -> Path:
    """`source` itself, or, when `tokenizer` extends the vocabulary of the tokenizer that goes with `source`
    (`tfbert vocab add`), `scratch/encoder.keras`: `source`'s encoder with its token table grown, each new row
    the mean of the rows of the pieces the word split into before (`tfbert.models.resize.grow_rows`).

    Raises `ValueError` naming both sizes for a tokenizer that is smaller than `source`'s or changes its ids.

    Example:
        >>> from tfbert.text import insert_words, load_tokenizer
        >>> grown = insert_words(load_tokenizer("runs/bert/tokenizer"), ["covid"]).tokenizer   # tfbert vocab add
        >>> encoder_for_tokenizer("runs/bert", grown, Path("."))
        PosixPath('encoder.keras')
    """
    from tfbert.models.resize import resize_token_embeddings
    from tfbert.text.vocabulary_growth import check_extension, old_pieces_of_added_tokens

    old = find_pretrained_tokenizer(source)
    if old is None or old.vocabulary_size() == tokenizer.vocabulary_size():
        return Path(source)
    check_extension(old, tokenizer, str(source))
    encoder = load_pretrained_encoder(source)
    if encoder.config.vocab_size != old.vocabulary_size():
        raise ValueError(f"{source}: its tokenizer has {old.vocabulary_size()} tokens but its token table "
                         f"{encoder.config.vocab_size} rows; cannot tell which rows the added tokens follow")
    grown = resize_token_embeddings(encoder, tokenizer.vocabulary_size(), old_pieces_of_added_tokens(old, tokenizer))
    grown.save(scratch / "encoder.keras")
    return scratch / "encoder.keras"
