"""Text to model inputs for fine-tuning, packed by the model's `Preprocessor` rule, as NumPy arrays.

Every array comes out of `tfbert.data.packing.SegmentPacker`, the packer exported models and
pretraining pipelines use, so fine-tuning and serving cannot disagree on special tokens, type
ids or truncation: BERT-style `[CLS] a [SEP] b [SEP]` (type ids 0, then 1) or RoBERTa-style
`<s> a </s></s> b </s>` (type ids 0), pairs trimmed longest-first as Hugging Face does.

Pass a `Preprocessor` (its tokenizer, sequence length and packing style), or a tokenizer with
`max_length` and `packing_style` (a `PieceTokenizer`, e.g. a Hugging Face `tokenizers` adapter,
which needs `packing_style`, or a `tfbert.text` tokenizer, whose special tokens give it).

Example:
    >>> from tfbert.finetuning.pretrained import load_pretrained_preprocessor
    >>> preprocessor = load_pretrained_preprocessor("all-MiniLM-L6-v2/", sequence_length=128)
    >>> features = encode_texts(preprocessor, ["a great film"])
    >>> sorted(features), features["token_ids"].shape
    (['padding_mask', 'segment_ids', 'token_ids'], (1, 128))
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import tensorflow as tf

from tfbert.data.packing import PackingStyle, SegmentPacker, packing_style_of
from tfbert.data.preprocessor import DEFAULT_SEQUENCE_LENGTH, Preprocessor
from tfbert.data.text_lists import text_list
from tfbert.finetuning.tokenization import PieceTokenizer, as_piece_tokenizer, piece_ids

TokenizerLike = PieceTokenizer | Preprocessor | Any


def tokenizer_and_packer(source: TokenizerLike, max_length: int | None = None, *,
                         packing_style: PackingStyle | None = None) -> tuple[PieceTokenizer, SegmentPacker]:
    """The piece tokenizer and the packer that features of `source` use.

    A `Preprocessor` gives its own (its packing style; its length unless `max_length` is given);
    a tokenizer gets a packer of `max_length` (default 128) tokens in `packing_style`, by default
    the style its special tokens belong to (`tfbert.data.packing.packing_style_of`; a bare
    `PieceTokenizer` names none, so it needs `packing_style`).
    """
    if isinstance(source, Preprocessor):
        packer = source.packer
        if packing_style is not None and packing_style != packer.style:
            raise ValueError(f"packing_style={packing_style!r} disagrees with the preprocessor's {packer.style!r}; "
                             "leave it out (the preprocessor's is the model's)")
        if max_length is not None and max_length != packer.sequence_length:
            packer = SegmentPacker(max_length, packer.cls_id, packer.sep_id, packer.pad_id, style=packer.style)
        return as_piece_tokenizer(source.tokenizer), packer
    tokenizer = as_piece_tokenizer(source)
    style = packing_style or packing_style_of(source)
    return tokenizer, SegmentPacker(max_length or DEFAULT_SEQUENCE_LENGTH, tokenizer.cls_id, tokenizer.sep_id,
                                    tokenizer.pad_id, style=style)


def ragged_ids(rows: Sequence[Sequence[int]]) -> tf.RaggedTensor:
    """Python lists of ids as an int32 `[rows, None]` ragged tensor (built without a Python loop per id)."""
    lengths = np.array([len(row) for row in rows], np.int64)
    values = np.fromiter((value for row in rows for value in row), np.int32, count=int(lengths.sum()))
    return tf.RaggedTensor.from_row_lengths(values, lengths)


def pack_rows(packer: SegmentPacker, *segments: Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
    """`packer` on lists of id rows (one list per segment): `token_ids`, `segment_ids`, `padding_mask` arrays."""
    if not len(segments[0]):
        shape = (0, packer.sequence_length)
        return {name: np.zeros(shape, np.int32) for name in ("token_ids", "segment_ids", "padding_mask")}
    return {name: value.numpy() for name, value in packer([ragged_ids(rows) for rows in segments]).items()}


def pad_rows(rows: Sequence[Sequence[int]], length: int, value: int = 0) -> np.ndarray:
    """`[rows, length]` int32 array, each row right-padded with `value`."""
    array = np.full((len(rows), length), value, np.int32)
    for index, row in enumerate(rows):
        array[index, : len(row)] = row
    return array


def encode_texts(
    tokenizer: TokenizerLike,
    texts: Sequence[str],
    pair_texts: Sequence[str] | None = None,
    max_length: int | None = None,
    *,
    packing_style: PackingStyle | None = None,
) -> dict[str, np.ndarray]:
    """Encoder inputs `[texts, length]` for single texts or text pairs (see the module notes).

    `tokenizer` is a `Preprocessor`, a `PieceTokenizer` or a `tfbert.text` tokenizer;
    `max_length` and `packing_style` apply to the latter two (and `max_length` replaces a
    preprocessor's length); `packing_style` defaults to the tokenizer's (see `tokenizer_and_packer`).
    """
    texts = text_list(texts)
    pair_texts = None if pair_texts is None else text_list(pair_texts, "pair_texts")
    if pair_texts is not None and len(pair_texts) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(pair_texts)} pair texts")
    pieces, packer = tokenizer_and_packer(tokenizer, max_length, packing_style=packing_style)
    segments = [piece_ids(pieces, texts)]
    if pair_texts is not None:
        segments.append(piece_ids(pieces, pair_texts))
    return pack_rows(packer, *segments)


def encode_choices(
    tokenizer: TokenizerLike,
    contexts: Sequence[str],
    choices: Sequence[Sequence[str]],
    max_length: int | None = None,
    *,
    packing_style: PackingStyle | None = None,
) -> dict[str, np.ndarray]:
    """Multiple-choice inputs `[examples, choices, length]`: the pair (context, choice) for every choice."""
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
        packing_style=packing_style,
    )
    return {name: array.reshape(len(contexts), per_example, -1) for name, array in flat.items()}
