"""Which old pieces each added token used to split into, for growing a model's vocabulary.

A tokenizer with words added (`tfbert vocab add`) keeps every old id and appends new ones; the
model's new rows start as the mean of the rows of the pieces the word split into under the old
tokenizer (`tfbert.models.resize.grow_rows`). This module does the text side: it checks that the
new tokenizer extends the old one and tokenizes each added word with the old tokenizer.
"""

from __future__ import annotations

import tensorflow as tf

from tfbert.text.base import Tokenizer

# Word-piece markers that are not part of the word: WordPiece's continuation, SentencePiece's word
# start, byte-level BPE's leading space.
PIECE_MARKERS = ("##", "\u2581", "\u0120")


def word_of(token: str) -> str:
    """The text of a vocabulary entry without its piece marker (`##ing` -> `ing`, `▁서울` -> `서울`)."""
    for marker in PIECE_MARKERS:
        if token.startswith(marker) and len(token) > len(marker):
            return token[len(marker):]
    return token


def check_extension(old: Tokenizer, new: Tokenizer, source: str = "the model") -> None:
    """`ValueError` unless `new` holds `old`'s vocabulary unchanged as its first ids, with more after them."""
    old_tokens, new_tokens = old.vocabulary(), new.vocabulary()
    if len(new_tokens) < len(old_tokens):
        raise ValueError(f"the tokenizer has {len(new_tokens)} tokens but {source} has {len(old_tokens)}: a smaller "
                         "vocabulary cannot replace it; give a tokenizer that extends it (tfbert vocab add)")
    changed = next((i for i, (a, b) in enumerate(zip(old_tokens, new_tokens)) if a != b), None)
    if changed is not None:
        raise ValueError(f"the tokenizer ({len(new_tokens)} tokens) does not extend {source}'s ({len(old_tokens)} "
                         f"tokens): id {changed} is {new_tokens[changed]!r} instead of {old_tokens[changed]!r}; "
                         "add words with tfbert vocab add so that every old id keeps its token")


def old_pieces_of_added_tokens(old: Tokenizer, new: Tokenizer) -> dict[int, list[int]]:
    """`{new id: ids of the old pieces its word split into}` for every id `new` adds to `old`.

    Special pieces (`[UNK]`) are left out of the lists; an added token whose word gives none maps to `[]`.

    Example:
        >>> from tfbert.text import insert_words, load_tokenizer
        >>> old = load_tokenizer("vocab/")
        >>> new = insert_words(old, ["covid"]).tokenizer
        >>> old_pieces_of_added_tokens(old, new)     # "covid" was "co" + "##vid"
        {30522: [2522, 17258]}
    """
    check_extension(old, new)
    added = new.vocabulary()[old.vocabulary_size():]
    if not added:
        return {}
    special = set(old.special_token_ids())
    pieces = old.tokenize(tf.constant([word_of(token) for token in added])).to_list()
    return {old.vocabulary_size() + i: [piece for piece in ids if piece not in special]
            for i, ids in enumerate(pieces)}
