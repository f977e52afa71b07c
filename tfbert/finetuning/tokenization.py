"""The tokenizer interface the task features use: word pieces with character offsets.

Task feature builders need, for every text, the piece ids and where each piece
starts and ends in the *characters* of the original text (Python string
indices), so that answers and tags map back to exact spans. Two adapters
provide that:

- `TensorFlowTokenizer` wraps a TensorFlow tokenizer with
  `tokenize_with_offsets(strings)` returning byte offsets (`tfbert.text`
  tokenizers, `tensorflow_text.BertTokenizer`) and converts bytes to characters.
- `HuggingFaceTokenizer` wraps a `tokenizers.Tokenizer` (offsets already in characters).

The byte offsets must point into the *original* text. `tensorflow_text.BertTokenizer`
with `lower_case=True` gives offsets into its lower-cased, accent-stripped
text (TF Text 2.21: "Zürcher" ends one byte early), so it is only right for
ASCII text; use it cased or use a `tfbert.text` tokenizer.

Example:
    >>> import tensorflow_text
    >>> tokenizer = TensorFlowTokenizer(tensorflow_text.BertTokenizer("vocab.txt", lower_case=False),
    ...                                 cls_id=101, sep_id=102, pad_id=0)
    >>> pieces = tokenizer.encode_with_offsets(["tokenizers split words"])[0]
    >>> pieces.starts, pieces.ends
    ([0, 5, 9, 11, 17], [5, 9, 10, 16, 22])
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, Sequence

import numpy as np


@dataclasses.dataclass(frozen=True)
class Pieces:
    """The pieces of one text: ids and `[start, end)` character offsets into the text."""

    ids: list[int]
    starts: list[int]
    ends: list[int]

    def __len__(self) -> int:
        return len(self.ids)


class PieceTokenizer(Protocol):
    """What feature builders need from a tokenizer."""

    cls_id: int
    sep_id: int
    pad_id: int

    def encode_with_offsets(self, texts: Sequence[str]) -> list[Pieces]:
        """Pieces of each text, without special tokens."""


def byte_to_char_offsets(text: str) -> np.ndarray:
    """`table[b]` = index of the character that starts at UTF-8 byte `b` (also valid at `len(bytes)`).

    Example:
        >>> byte_to_char_offsets("é a").tolist()
        [0, 1, 1, 2, 3]
    """
    data = np.frombuffer(text.encode("utf-8"), np.uint8)
    starts = (data & 0xC0) != 0x80
    return np.concatenate([[0], np.cumsum(starts)]).astype(np.int64)


def _rows(tensor) -> list[list[int]]:
    """A `[batch, ...]` ragged or dense tensor as one flat Python list per text."""
    while getattr(tensor.shape, "rank", 2) > 2:
        tensor = tensor.merge_dims(-2, -1)
    values = tensor.to_list() if hasattr(tensor, "to_list") else np.asarray(tensor).tolist()
    return [list(row) for row in values]


class TensorFlowTokenizer:
    """Adapter for TensorFlow tokenizers that return byte offsets (see module notes)."""

    def __init__(self, tokenizer: Any, cls_id: int, sep_id: int, pad_id: int = 0):
        self.tokenizer = tokenizer
        self.cls_id, self.sep_id, self.pad_id = cls_id, sep_id, pad_id

    @property
    def special_tokens(self) -> dict[str, str | None] | None:
        """The wrapped tokenizer's special tokens (role -> token; what tells its packing style), None where it
        names none (`tensorflow_text.BertTokenizer`)."""
        return getattr(self.tokenizer, "special_tokens", None)

    def encode_with_offsets(self, texts: Sequence[str]) -> list[Pieces]:
        if not texts:
            return []
        ids, starts, ends = self.tokenizer.tokenize_with_offsets(list(texts))
        pieces = []
        for text, row_ids, row_starts, row_ends in zip(texts, _rows(ids), _rows(starts), _rows(ends)):
            table = byte_to_char_offsets(text)
            pieces.append(Pieces([int(i) for i in row_ids], table[row_starts].tolist(), table[row_ends].tolist()))
        return pieces

    def encode_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids of `encode_with_offsets`, from the tokenizer's `tokenize`: no offsets worked out."""
        if not texts:
            return []
        return [[int(i) for i in row] for row in _rows(self.tokenizer.tokenize(list(texts)))]


class HuggingFaceTokenizer:
    """Adapter for a Hugging Face `tokenizers.Tokenizer` (special tokens left out, offsets in characters)."""

    def __init__(self, tokenizer: Any, cls_id: int, sep_id: int, pad_id: int = 0):
        self.tokenizer = tokenizer
        self.cls_id, self.sep_id, self.pad_id = cls_id, sep_id, pad_id

    @property
    def special_tokens(self) -> dict[str, str | None]:
        """`cls`, `sep` and `pad` tokens by their ids in the wrapped tokenizer (what tells its packing style)."""
        return {role: self.tokenizer.id_to_token(getattr(self, f"{role}_id")) for role in ("cls", "sep", "pad")}

    def encode_with_offsets(self, texts: Sequence[str]) -> list[Pieces]:
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [
            Pieces(list(encoding.ids), [start for start, _ in encoding.offsets], [end for _, end in encoding.offsets])
            for encoding in encodings
        ]


def piece_ids(tokenizer: PieceTokenizer, texts: Sequence[str]) -> list[list[int]]:
    """The ids of each text's pieces: the tokenizer's `encode_ids` where it has one, else `encode_with_offsets`'.

    Features that need no offsets (classification, regression, embeddings) take this way: a WordPiece
    tokenizer's first call with offsets traces 2.4 CPU-s of ops (the aligned normalization), without
    them 0.4, and its later calls cost a third.

    Example:
        >>> from tfbert.text import WordPieceTokenizer
        >>> piece_ids(as_piece_tokenizer(WordPieceTokenizer("vocab.txt")), ["hello world"])
        [[7592, 2088]]
    """
    encode_ids = getattr(tokenizer, "encode_ids", None)
    if encode_ids is not None:
        return encode_ids(list(texts))
    return [row.ids for row in tokenizer.encode_with_offsets(list(texts))]


def as_piece_tokenizer(tokenizer: Any) -> PieceTokenizer:
    """`tokenizer` as a `PieceTokenizer`: as is if it has `encode_with_offsets`, else a `tfbert.text`
    tokenizer (anything with `tokenize_with_offsets` and `cls_id`/`sep_id`/`pad_id`) wrapped in
    `TensorFlowTokenizer`.

    Example:
        >>> from tfbert.text import WordPieceTokenizer
        >>> pieces = as_piece_tokenizer(WordPieceTokenizer("vocab.txt")).encode_with_offsets(["hello world"])[0]
        >>> pieces.starts, pieces.ends
        ([0, 6], [5, 11])
    """
    if hasattr(tokenizer, "encode_with_offsets"):
        return tokenizer
    ids = [getattr(tokenizer, name, None) for name in ("cls_id", "sep_id", "pad_id")]
    if not hasattr(tokenizer, "tokenize_with_offsets") or None in ids:
        raise TypeError(f"expected a tfbert.text tokenizer or a PieceTokenizer, got {type(tokenizer).__name__}")
    return TensorFlowTokenizer(tokenizer, *ids)
