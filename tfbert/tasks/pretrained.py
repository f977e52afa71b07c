"""Find the pretrained encoder to fine-tune, its tokenizer and its preprocessor: a `.keras` file, a pretraining
output folder, or a Hugging Face folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import keras

from tfbert.models.encoder import Encoder
from tfbert.tasks.model_dir import model_file

if TYPE_CHECKING:
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.text.base import Tokenizer


def load_pretrained_encoder(source: str | Path | Encoder, dtype: str | None = None) -> Encoder:
    """The `Encoder` of `source`, with its pretrained weights.

    `source` may be an `Encoder`; a `.keras` file holding an `Encoder` or any
    model with an `.encoder` (e.g. a saved `PretrainingModel` or task model);
    a folder with `encoder.keras`, a pretraining run's `model_dir` (whose
    `encoder/encoder.keras` `tfbert pretrain` writes) or a fine-tuning run's
    model dir (its `best.keras`, e.g. a sentence embedder); or a Hugging Face
    checkpoint folder (`config.json` + weights, through `load_huggingface`).
    The `.keras` file and the tfbert folders may be in a bucket (`gs://...`).

    Example:
        >>> encoder = load_pretrained_encoder("runs/bert-base/encoder")  # doctest: +SKIP
        >>> encoder = load_pretrained_encoder("gs://my-bucket/runs/albert_base")  # doctest: +SKIP
    """
    if isinstance(source, Encoder):
        return source
    if "://" in str(source):
        return _load_remote_encoder(str(source))
    path = Path(source)
    if path.is_dir():
        for candidate in (path / "encoder.keras", path / "encoder" / "encoder.keras", model_file(path)):
            if candidate.is_file() and candidate.suffix == ".keras":
                return load_pretrained_encoder(candidate)
        if (path / "config.json").is_file():
            from tfbert.convert.huggingface import load_huggingface

            return load_huggingface(path, dtype=dtype)
        raise FileNotFoundError(f"{path}: found neither encoder.keras (a tfbert encoder), best.keras with task.json "
                                "(a tfbert fine-tuning run) nor config.json (a Hugging Face checkpoint)")
    if path.suffix == ".keras" and path.is_file():
        return _encoder_in(path)
    raise FileNotFoundError(f"{path}: expected a .keras file or a folder with encoder.keras or config.json")


def _encoder_in(keras_file: str | Path) -> Encoder:
    model = keras.models.load_model(keras_file, compile=False)
    encoder = model if isinstance(model, Encoder) else getattr(model, "encoder", None)
    if not isinstance(encoder, Encoder):
        raise ValueError(f"{keras_file} holds a {type(model).__name__} with no tfbert encoder")
    return encoder


def _load_remote_encoder(url: str) -> Encoder:
    """A `.keras` file, an encoder folder or a pretraining run folder in a bucket (Keras copies the file locally)."""
    import tensorflow as tf

    url = url.rstrip("/")
    candidates = [url] if url.endswith(".keras") else [f"{url}/encoder.keras", f"{url}/encoder/encoder.keras"]
    for candidate in candidates:
        if tf.io.gfile.exists(candidate):
            return _encoder_in(candidate)
    raise FileNotFoundError(f"{url}: expected a .keras file, or a folder with encoder.keras or encoder/encoder.keras")


def find_pretrained_tokenizer(source: str | Path) -> "Tokenizer | None":
    """`load_pretrained_tokenizer(source)`, or None where no tokenizer goes with `source`."""
    from tfbert.text import load_tokenizer
    from tfbert.text.huggingface_folders import is_huggingface_tokenizer
    from tfbert.text.loading import is_tfbert_tokenizer

    path = Path(source)
    folder = path if path.is_dir() else path.parent
    for candidate in (folder, folder / "tokenizer", folder.parent / "tokenizer", folder.parent.parent / "tokenizer"):
        if is_tfbert_tokenizer(candidate):
            return load_tokenizer(candidate)
    if is_huggingface_tokenizer(folder):
        return load_tokenizer(folder)
    return None


def load_pretrained_tokenizer(source: str | Path) -> "Tokenizer":
    """The `tfbert.text` tokenizer that goes with a pretrained model or a tokenizer folder.

    `source` may be a tokenizer folder (written by `save_assets`, `tfbert vocab` or
    `train_sentencepiece`); a pretraining run's `model_dir` (its `tokenizer/`), a folder
    or `.keras` file inside one (e.g. `encoder/`, a fine-tuning run with `tokenizer/`
    beside `best.keras`); or a Hugging Face tokenizer folder of any kind (`vocab.txt`,
    `spiece.model`, `sentencepiece.bpe.model`, `vocab.json` + `merges.txt`, `tokenizer.json`).

    Example:
        >>> tokenizer = load_pretrained_tokenizer("all-MiniLM-L6-v2/")   # WordPieceTokenizer, uncased  # doctest: +SKIP
        >>> tokenizer = load_pretrained_tokenizer("runs/albert_tiny")    # the run's SentencePieceTokenizer  # doctest: +SKIP
    """
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    tokenizer = find_pretrained_tokenizer(path)
    if tokenizer is None:
        folder = path if path.is_dir() else path.parent
        raise FileNotFoundError(
            f"no tokenizer found for {path}: expected a tfbert tokenizer folder (tokenizer_config.json naming its "
            f"class) at {folder} or {folder / 'tokenizer'}, or Hugging Face tokenizer files in {folder}")
    return tokenizer


def pretrained_architecture(source: str | Path) -> str | None:
    """The architecture family `source` says it is, or None: the `preprocessor.json` or `config.yaml`
    (`tfbert pretrain`, `tfbert finetune`) beside it or up to two folders above, or a Hugging Face
    `config.json`'s `model_type`.

    Example:
        >>> pretrained_architecture("runs/albert_tiny/encoder/encoder.keras")  # doctest: +SKIP
        'albert'
    """
    from tfbert import architectures
    from tfbert.config import load_config
    from tfbert.data.preprocessor import PREPROCESSOR_FILE, find_saved_preprocessor

    path = Path(source)
    saved = find_saved_preprocessor(path)
    if saved is not None:
        architecture = json.loads((saved / PREPROCESSOR_FILE).read_text(encoding="utf-8")).get("architecture")
        if architecture:
            return architecture
    folder = path if path.is_dir() else path.parent
    for candidate in (folder, folder.parent, folder.parent.parent):
        if (candidate / "config.yaml").is_file():
            return load_config(candidate / "config.yaml").architecture
    if (folder / "config.json").is_file():
        try:
            model_type = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type")
            return architectures.with_format("huggingface", model_type).name
        except (ValueError, AttributeError):
            return None
    return None


def load_pretrained_preprocessor(source: str | Path, tokenizer: "Tokenizer | None" = None,
                                 sequence_length: int | None = None) -> "Preprocessor":
    """The `Preprocessor` that goes with a pretrained model, for fine-tuning it (no masking).

    The packing style is the saved preprocessor's, else the architecture's
    (`pretrained_architecture`), else that of the encoder's embedding layout;
    `tokenizer` and `sequence_length` replace the saved ones (default: the tokenizer found
    with `load_pretrained_tokenizer`, the saved length or 128).

    Example:
        >>> preprocessor = load_pretrained_preprocessor("xlm-roberta-base/", sequence_length=256)  # doctest: +SKIP
        >>> preprocessor.packing_style  # doctest: +SKIP
        'roberta'
    """
    from tfbert.data.preprocessor import (DEFAULT_SEQUENCE_LENGTH, Preprocessor, encoder_packing_style,
                                          find_saved_preprocessor)

    saved = find_saved_preprocessor(source)
    if saved is not None:
        found = Preprocessor.load(saved, tokenizer=tokenizer)
        return Preprocessor(found.tokenizer, sequence_length or found.sequence_length, found.packing_style,
                            architecture=found.architecture)
    tokenizer = tokenizer or load_pretrained_tokenizer(source)
    length = sequence_length or DEFAULT_SEQUENCE_LENGTH
    architecture = pretrained_architecture(source)
    if architecture is not None:
        return Preprocessor.for_architecture(architecture, tokenizer, length)
    style = encoder_packing_style(load_pretrained_encoder(source).config.position_offset)
    return Preprocessor(tokenizer, length, style)


def encoder_for_tokenizer(source: str | Path, tokenizer: "Tokenizer", scratch: Path) -> Path:
    """`source` itself, or, when `tokenizer` extends the vocabulary of the tokenizer that goes with `source`
    (`tfbert vocab add`), `scratch/encoder.keras`: `source`'s encoder with its token table grown, each new row
    the mean of the rows of the pieces the word split into before (`tfbert.models.resize.grow_rows`).

    Raises `ValueError` naming both sizes for a tokenizer that is smaller than `source`'s or changes its ids.

    Example:
        >>> encoder_for_tokenizer("runs/albert_tiny", load_tokenizer("vocab_with_words/"), Path(tmp))  # doctest: +SKIP
        PosixPath('/tmp/.../encoder.keras')
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
