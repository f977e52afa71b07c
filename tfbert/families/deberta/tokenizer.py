"""DeBERTa-v3's Hugging Face tokenizer folder: `spm.model`, a SentencePiece model whose special tokens are BERT's.

The spec's Hugging Face format names this reader (`HuggingFaceFormat.tokenizer_files`), so
`tfbert.text.load_tokenizer` reads a `microsoft/deberta-v3-*` folder with the ids its embeddings have.

Example:
    >>> from tfbert.text import load_tokenizer
    >>> type(load_tokenizer("deberta-v3-small/")).__name__   # a microsoft/deberta-v3-small folder  # doctest: +SKIP
    'SentencePieceTokenizer'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from tfbert.text.huggingface_folders import sentencepiece_tokenizer
from tfbert.text.sentencepiece_tokenizer import SentencePieceTokenizer

MODEL_FILE = "spm.model"
# What `DebertaV2Tokenizer` calls its special tokens where tokenizer_config.json does not say.
SPECIAL_TOKENS = {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "mask_token": "[MASK]",
                  "unk_token": "[UNK]"}


def read_deberta_tokenizer(folder: Path, settings: Mapping[str, Any]) -> SentencePieceTokenizer:
    """The tokenizer of a DeBERTa-v2/v3 folder's `spm.model`, with `settings` (its tokenizer_config.json)."""
    return sentencepiece_tokenizer((folder / MODEL_FILE).read_bytes(), {**SPECIAL_TOKENS, **settings})
