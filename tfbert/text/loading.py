"""Loading whichever tokenizer a directory holds: one `save_assets` wrote, or a Hugging Face tokenizer folder."""

from __future__ import annotations

import json
from pathlib import Path

from tfbert.artifacts.checks import FileContentError
from tfbert.artifacts.files import read_tokenizer_settings
from tfbert.artifacts.layout import TOKENIZER_CONFIG_FILE
from tfbert.text._files import PathLike, existing_file
from tfbert.text.base import Tokenizer
from tfbert.text.byte_pair_tokenizer import BytePairTokenizer
from tfbert.text.huggingface_folders import is_huggingface_tokenizer, read_huggingface_tokenizer
from tfbert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from tfbert.text.wordpiece_tokenizer import WordPieceTokenizer

_CLASSES = {cls.__name__: cls for cls in (WordPieceTokenizer, SentencePieceTokenizer, BytePairTokenizer)}


def is_tfbert_tokenizer(directory: PathLike) -> bool:
    """Whether `directory` holds a tokenizer `save_assets` wrote (its tokenizer_config.json names the class)."""
    config_path = Path(directory) / TOKENIZER_CONFIG_FILE
    try:
        return "class" in json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, TypeError):
        return False


def as_tokenizer(tokenizer: Tokenizer | PathLike | None) -> Tokenizer | None:
    """`tokenizer` itself, the tokenizer saved in that folder (`load_tokenizer`), or None for None."""
    if tokenizer is None or isinstance(tokenizer, Tokenizer):
        return tokenizer
    return load_tokenizer(tokenizer)


def load_tokenizer(directory: PathLike) -> Tokenizer:
    """The tokenizer saved in `directory`: one `save_assets` wrote (chosen by its tokenizer_config.json), or
    a Hugging Face tokenizer folder of any kind (`tfbert.text.huggingface_folders`) with the same ids.

    Example:
        >>> from tfbert.text import WordPieceTokenizer
        >>> WordPieceTokenizer("vocab.txt").save_assets("tok")
        >>> load_tokenizer("tok").tokenize(["Hello"])
        <tf.RaggedTensor [[7592]]>
        >>> load_tokenizer("all-MiniLM-L6-v2/").vocabulary_size()   # a Hugging Face folder
        30522
        >>> load_tokenizer("xlm-roberta-base/")     # sentencepiece.bpe.model, fairseq's ids (no XLM-R folder in the test assets)  # doctest: +SKIP
    """
    try:
        if not is_tfbert_tokenizer(directory) and is_huggingface_tokenizer(directory):
            return read_huggingface_tokenizer(directory)
        config_path = existing_file(Path(directory) / TOKENIZER_CONFIG_FILE, "tokenizer config")
        name = read_tokenizer_settings(Path(directory)).get("class")   # every field checked (`FileContentError`)
        if name not in _CLASSES:
            raise FileContentError(config_path, "class", f"is {name!r}, expected one of {', '.join(sorted(_CLASSES))}")
        return _CLASSES[name].from_directory(directory)
    except FileContentError:
        raise
    except ValueError as error:   # a tokenizer's own check: name the folder where the message does not
        raise ValueError(error if str(directory) in str(error) else f"{directory}: {error}") from None
