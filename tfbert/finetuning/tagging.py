"""Word-level tags (BIO) to piece-level labels and back.

A word split into several pieces is labelled on its first piece only; the
other pieces, the special tokens and the padding get weight 0, so they count
neither in the loss nor in the accuracy. Predictions come back per word from
the first piece of each word.

Example:
    >>> from tfbert.text import load_tokenizer
    >>> features, labels, first_pieces = encode_tagged_words(
    ...     load_tokenizer("vocab/"), [["Ada", "Lovelace", "wrote"]], [[1, 2, 0]], max_length=16)
    >>> labels["label_weights"][0, :5].tolist()          # [CLS] ada love ##lace wrote
    [0, 1, 1, 0, 1]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tfbert.data.packing import PackingStyle, num_special_tokens, segment_starts
from tfbert.finetuning.features import TokenizerLike, pack_rows, pad_rows, tokenizer_and_packer


def _word_of_pieces(words: Sequence[str], ends: Sequence[int]) -> list[int]:
    """Index of the word holding each piece's last character, for the words joined by single spaces.

    The last character, not the first, so that pieces carrying the space before
    a word (byte-level BPE) still belong to that word.
    """
    word_starts = np.cumsum([0] + [len(word) + 1 for word in words[:-1]])
    return (np.searchsorted(word_starts, np.asarray(ends, np.int64) - 1, side="right") - 1).tolist()


def encode_tagged_words(
    tokenizer: TokenizerLike,
    sentences: Sequence[Sequence[str]],
    tags: Sequence[Sequence[int]] | None = None,
    max_length: int | None = 128,
    *,
    packing_style: PackingStyle | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """Encoder inputs, `{"labels", "label_weights"}` and the first piece of each word.

    `tokenizer` is a `Preprocessor` (its packing; its length unless `max_length` is given) or a
    tokenizer packed in `packing_style`, by default its own (`tfbert.finetuning.features.tokenizer_and_packer`).

    Returns:
        features: `token_ids`, `segment_ids`, `padding_mask` `[sentences, max_length]`.
        labels: `labels` (the word's tag on its first piece, 0 elsewhere) and
            `label_weights` (1 on first pieces); all zeros when `tags` is None.
        first_pieces: `[sentences, max_words]` position of each word's first
            piece, -1 for words cut off by `max_length` (and for padding).
    """
    if tags is not None and any(len(words) != len(row) for words, row in zip(sentences, tags)):
        bad = next(i for i, (words, row) in enumerate(zip(sentences, tags)) if len(words) != len(row))
        raise ValueError(f"sentence {bad} has {len(sentences[bad])} words but {len(tags[bad])} tags")
    pieces, packer = tokenizer_and_packer(tokenizer, max_length, packing_style=packing_style)
    length = packer.sequence_length
    room = length - num_special_tokens(packer.style, 1)
    start = segment_starts(packer.style, [0])[0]
    encoded = pieces.encode_with_offsets([" ".join(words) for words in sentences])
    label_rows, weight_rows = [], []
    first_pieces = np.full((len(sentences), max((len(words) for words in sentences), default=0)), -1, np.int32)
    for row, (words, encoding) in enumerate(zip(sentences, encoded)):
        labels, weights = [0] * start, [0] * start
        previous_word = -1
        for word in _word_of_pieces(words, encoding.ends[:room]):
            first = word != previous_word
            labels.append(int(tags[row][word]) if first and tags is not None else 0)
            weights.append(int(first and tags is not None))
            if first:
                first_pieces[row, word] = len(labels) - 1
            previous_word = word
        label_rows.append(labels)
        weight_rows.append(weights)
    features = pack_rows(packer, [encoding.ids for encoding in encoded])
    labels = {"labels": pad_rows(label_rows, length), "label_weights": pad_rows(weight_rows, length)}
    return features, labels, first_pieces


def word_predictions(logits: np.ndarray, first_pieces: np.ndarray, sentences: Sequence[Sequence[str]]) -> list[list[int]]:
    """Predicted tag of each word of `sentences` (from its first piece); words cut off by truncation get tag 0."""
    predicted = np.asarray(logits).argmax(-1)
    return [
        [int(predicted[row, position]) if position >= 0 else 0 for position in first_pieces[row, : len(words)]]
        for row, words in enumerate(sentences)
    ]
