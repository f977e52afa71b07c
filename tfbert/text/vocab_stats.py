"""How well a tokenizer's vocabulary fits a text: unknown-piece rate, pieces per word, coverage.

Words are the text's whitespace-separated words; each distinct word is tokenized once, after a
space (as it stands inside a line), and counted as often as it occurs.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Iterable

import tensorflow as tf

from tfbert.text.base import Tokenizer

_BATCH = 4096


@dataclasses.dataclass(frozen=True)
class VocabularyStats:
    """Counts over a text, and the three rates `tfbert vocab stats` prints.

    Example:
        >>> from tfbert.text import WordPieceTokenizer
        >>> stats = vocabulary_stats(WordPieceTokenizer("vocab.txt"), ["the tokenizers split words", "the 서울"])
        >>> f"{stats.unknown_rate:.1%} unknown, {stats.pieces_per_word:.2f} pieces a word"
        '0.0% unknown, 2.00 pieces a word'
    """

    words: int
    pieces: int
    unknown_pieces: int
    single_piece_words: int

    @property
    def unknown_rate(self) -> float:
        """Share of the pieces that are the unknown token."""
        return self.unknown_pieces / max(self.pieces, 1)

    @property
    def pieces_per_word(self) -> float:
        return self.pieces / max(self.words, 1)

    @property
    def coverage(self) -> float:
        """Share of the words that are one known piece."""
        return self.single_piece_words / max(self.words, 1)

    def as_dict(self) -> dict[str, float | int]:
        rates = {"unknown_rate": self.unknown_rate, "pieces_per_word": self.pieces_per_word, "coverage": self.coverage}
        return {**dataclasses.asdict(self), **rates}


def vocabulary_stats(tokenizer: Tokenizer, lines: Iterable[str]) -> VocabularyStats:
    """Tokenizes every distinct word of `lines` and counts pieces, unknown pieces and one-piece words."""
    counts = collections.Counter(word for line in lines for word in line.split())
    if not counts:
        raise ValueError("the text has no words")
    words, weights = list(counts), list(counts.values())
    pieces = unknown = single = 0
    for start in range(0, len(words), _BATCH):
        batch = words[start : start + _BATCH]
        ids = tokenizer.tokenize(tf.constant([" " + word for word in batch]))
        lengths = ids.row_lengths().numpy()
        is_unknown = tf.equal(ids.flat_values, -1 if tokenizer.unk_id is None else tokenizer.unk_id)
        unknowns = tf.reduce_sum(ids.with_flat_values(tf.cast(is_unknown, tf.int64)), axis=1).numpy()
        for weight, length, unknown_count in zip(weights[start : start + _BATCH], lengths, unknowns):
            pieces += weight * int(length)
            unknown += weight * int(unknown_count)
            single += weight * int(length == 1 and unknown_count == 0)
    return VocabularyStats(sum(weights), pieces, unknown, single)
