"""Text to model inputs: `[CLS] a [SEP] (b [SEP])` packing, truncation and padding, in NumPy.

Example:
    >>> features = encode_texts(tokenizer, ["a great film"], max_length=16)
    >>> sorted(features), features["token_ids"].shape
    (['padding_mask', 'segment_ids', 'token_ids'], (1, 16))
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tfbert.tasks.tokenization import PieceTokenizer, as_piece_tokenizer


def truncate_pair(first: list[int], second: list[int], budget: int) -> tuple[list[int], list[int]]:
    """Drop pieces from the end of the longer side until both fit in `budget` (BERT's longest-first)."""
    first, second = list(first), list(second)
    while len(first) + len(second) > budget:
        (first if len(first) >= len(second) else second).pop()
    return first, second


def pack(tokenizer: PieceTokenizer, first: list[int], second: list[int] | None, max_length: int) -> tuple[list[int], list[int]]:
    """Token ids and segment ids of `[CLS] first [SEP] (second [SEP])`, truncated to `max_length`."""
    specials = 3 if second is not None else 2
    if max_length <= specials:
        raise ValueError(f"max_length {max_length} leaves no room for text after {specials} special tokens")
    first, second = truncate_pair(first, second or [], max_length - specials)
    ids = [tokenizer.cls_id, *first, tokenizer.sep_id]
    segments = [0] * len(ids)
    if specials == 3:
        ids += [*second, tokenizer.sep_id]
        segments += [1] * (len(second) + 1)
    return ids, segments


def pad_rows(rows: Sequence[Sequence[int]], length: int, value: int = 0) -> np.ndarray:
    """`[rows, length]` int32 array, each row right-padded with `value`."""
    array = np.full((len(rows), length), value, np.int32)
    for index, row in enumerate(rows):
        array[index, : len(row)] = row
    return array


def encode_texts(
    tokenizer: PieceTokenizer,
    texts: Sequence[str],
    pair_texts: Sequence[str] | None = None,
    max_length: int = 128,
) -> dict[str, np.ndarray]:
    """Encoder inputs for single texts or text pairs, padded to `max_length`.

    `tokenizer` is a `PieceTokenizer` or a `tfbert.text` tokenizer (see `as_piece_tokenizer`).
    """
    if pair_texts is not None and len(pair_texts) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(pair_texts)} pair texts")
    tokenizer = as_piece_tokenizer(tokenizer)
    firsts = tokenizer.encode_with_offsets(list(texts))
    seconds = tokenizer.encode_with_offsets(list(pair_texts)) if pair_texts is not None else [None] * len(texts)
    packed = [pack(tokenizer, first.ids, second.ids if second is not None else None, max_length)
              for first, second in zip(firsts, seconds)]
    ids = pad_rows([row for row, _ in packed], max_length, tokenizer.pad_id)
    return {
        "token_ids": ids,
        "segment_ids": pad_rows([segments for _, segments in packed], max_length),
        "padding_mask": pad_rows([[1] * len(row) for row, _ in packed], max_length),
    }


def encode_choices(
    tokenizer: PieceTokenizer,
    contexts: Sequence[str],
    choices: Sequence[Sequence[str]],
    max_length: int = 128,
) -> dict[str, np.ndarray]:
    """Multiple-choice inputs `[examples, choices, max_length]`: `[CLS] context [SEP] choice [SEP]` per choice."""
    counts = {len(row) for row in choices}
    if len(counts) != 1:
        raise ValueError(f"every example needs the same number of choices; got {sorted(counts)}")
    if len(choices) != len(contexts):
        raise ValueError(f"{len(contexts)} contexts but {len(choices)} rows of choices")
    per_example = counts.pop()
    flat = encode_texts(
        tokenizer,
        [context for context in contexts for _ in range(per_example)],
        [choice for row in choices for choice in row],
        max_length,
    )
    return {name: array.reshape(len(contexts), per_example, max_length) for name, array in flat.items()}
