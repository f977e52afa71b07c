"""Which vocabulary entries start a word, for whole-word, n-gram and span masking.

Each subword scheme marks word boundaries in its own way:

* ``"wordpiece"`` (BERT, ALBERT's WordPiece vocabularies, ELECTRA): a piece
  that continues a word starts with ``##``; every other piece starts a word.
* ``"sentencepiece"`` (ALBERT, XLM-R, XLM): a piece that starts a word begins
  with ``▁`` (U+2581); the rest continue the word before them.
* ``"byte_bpe"`` (RoBERTa, GPT-2 byte-level BPE): a piece that starts a word
  begins with ``Ġ`` (the byte-level form of a space); the rest continue.

The first piece after a special token (or at the start of a sequence) always
starts a word, whatever its spelling; the maskers take care of that.
"""

from __future__ import annotations

from typing import Literal, Sequence

import numpy as np

WordScheme = Literal["wordpiece", "sentencepiece", "byte_bpe"]


def word_start_flags(vocabulary: Sequence[str], scheme: WordScheme) -> np.ndarray:
    """A boolean array, one entry per vocabulary id: True where the piece starts a word.

    >>> word_start_flags(["[CLS]", "play", "##ing", "▁x"], "wordpiece").tolist()
    [True, True, False, True]
    >>> word_start_flags(["<s>", "▁play", "ing"], "sentencepiece").tolist()
    [False, True, False]
    """
    if scheme == "wordpiece":
        flags = [not piece.startswith("##") for piece in vocabulary]
    elif scheme == "sentencepiece":
        flags = [piece.startswith("\u2581") for piece in vocabulary]
    elif scheme == "byte_bpe":
        flags = [piece.startswith("\u0120") for piece in vocabulary]
    else:
        raise ValueError(f"unknown word scheme {scheme!r}; use 'wordpiece', 'sentencepiece' or 'byte_bpe'")
    return np.asarray(flags, dtype=bool)
