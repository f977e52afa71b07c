"""Loading whichever tokenizer a directory written by `save_assets` holds."""

from __future__ import annotations

import json
from pathlib import Path

from tfbert.text._files import PathLike, existing_file
from tfbert.text.base import Tokenizer
from tfbert.text.byte_pair_tokenizer import BytePairTokenizer
from tfbert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from tfbert.text.wordpiece_tokenizer import WordPieceTokenizer

_CLASSES = {cls.__name__: cls for cls in (WordPieceTokenizer, SentencePieceTokenizer, BytePairTokenizer)}


def load_tokenizer(directory: PathLike) -> Tokenizer:
    """The tokenizer saved in `directory`, chosen by its tokenizer_config.json.

    Example:
        >>> tokenizer.save_assets("/tmp/tok")
        >>> load_tokenizer("/tmp/tok").tokenize(["Hello"])
    """
    config_path = existing_file(Path(directory) / "tokenizer_config.json", "tokenizer config")
    try:
        name = json.loads(config_path.read_text(encoding="utf-8"))["class"]
        cls = _CLASSES[name]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ValueError(f"tokenizer config file {config_path} does not name one of {sorted(_CLASSES)}") from None
    return cls.from_directory(directory)
