"""Pack token-id segments into fixed-length model inputs with special tokens.

Two layouts cover the BERT family:

* ``"bert"`` (BERT, ALBERT, ELECTRA, SpanBERT): ``[CLS] a [SEP] b [SEP]``,
  segment ids 0 for ``[CLS] a [SEP]`` and 1, 2, ... for later segments.
* ``"roberta"`` (RoBERTa, XLM-R, XLM): ``<s> a </s></s> b </s>``, a single
  segment type, so every segment id is 0.

Truncation is one rule everywhere in tfbert (fine-tuning features, `tf.data` and
export all pack through this class): one segment is cut at its end; a pair is
trimmed longest-first exactly as Hugging Face ``tokenizers`` does (``pair_lengths``);
three or more segments use TF-Text's ``ShrinkLongestTrimmer``. Combination is
``combine_segments`` and padding ``pad_model_inputs``; everything is graph ops
with static output shapes.
"""

from __future__ import annotations

from typing import Literal, Sequence

import tensorflow as tf
import tensorflow_text as tf_text

PackingStyle = Literal["bert", "roberta"]
Truncation = Literal["round_robin", "longest_first"]



def pair_lengths(first: tf.Tensor, second: tf.Tensor, budget: int) -> tuple[tf.Tensor, tf.Tensor]:
    """How many tokens of each segment a longest-first trim to `budget` keeps (Hugging Face's rule).

    The shorter segment is kept whole when twice its length fits; otherwise both get half the
    budget and the longer one (the second on a tie) the odd token. `first`, `second`: lengths `[batch]`.

    >>> [int(n[0]) for n in pair_lengths(tf.constant([9]), tf.constant([8]), 15)]   # Hugging Face: 8 and 7
    [8, 7]
    """
    first, second = tf.cast(first, tf.int64), tf.cast(second, tf.int64)
    shorter = tf.minimum(first, second)
    both_cut = 2 * shorter > budget
    kept_shorter = tf.where(both_cut, tf.constant(budget // 2, tf.int64), shorter)
    kept_longer = tf.where(both_cut, tf.constant(budget // 2 + budget % 2, tf.int64), budget - shorter)
    first_is_shorter = first <= second
    fits = first + second <= budget
    kept_first = tf.where(fits, first, tf.where(first_is_shorter, kept_shorter, kept_longer))
    kept_second = tf.where(fits, second, tf.where(first_is_shorter, kept_longer, kept_shorter))
    return kept_first, kept_second


def keep_first(segment: tf.RaggedTensor, counts: tf.Tensor) -> tf.RaggedTensor:
    """The first `counts[b]` items of every row `b` of `segment`."""
    keep = tf.ragged.range(segment.row_lengths()) < tf.expand_dims(tf.cast(counts, tf.int64), 1)
    return tf.ragged.boolean_mask(segment, keep)


def longest_first(segments: Sequence[tf.RaggedTensor], budget: int) -> list[tf.RaggedTensor]:
    """`segments` trimmed from their ends to `budget` tokens per row, longest first (see the module notes)."""
    if len(segments) == 1:
        return [segments[0][:, :budget]]
    if len(segments) == 2:
        kept = pair_lengths(segments[0].row_lengths(), segments[1].row_lengths(), budget)
        return [keep_first(segment, count) for segment, count in zip(segments, kept)]
    return tf_text.ShrinkLongestTrimmer(budget).trim(segments)


_TRIMMERS = {
    "round_robin": lambda segments, budget: tf_text.RoundRobinTrimmer(budget).trim(segments),
    "longest_first": longest_first,
}


def segment_starts(style: PackingStyle, lengths: Sequence[int]) -> list[int]:
    """The position of each segment's first token once packed (segments of `lengths` tokens).

    >>> segment_starts("bert", [3, 4]), segment_starts("roberta", [3, 4])
    ([1, 5], [1, 6])
    """
    starts, position = [], 1
    for index, length in enumerate(lengths):
        position += 1 if style == "roberta" and index else 0
        starts.append(position)
        position += length + 1
    return starts


def num_special_tokens(style: PackingStyle, num_segments: int) -> int:
    """How many special tokens `style` adds around `num_segments` segments.

    >>> num_special_tokens("bert", 2), num_special_tokens("roberta", 2)
    (3, 4)
    """
    if style == "bert":
        return 1 + num_segments
    if style == "roberta":
        return 2 * num_segments
    raise ValueError(f"unknown packing style {style!r}; use 'bert' or 'roberta'")


def packing_style_of(tokenizer) -> PackingStyle:
    """The packing style a tokenizer's special tokens belong to: a `[CLS]`-like start token (BERT,
    ALBERT, ELECTRA, SpanBERT, DeBERTa) packs BERT-style, an `<s>`-like one (RoBERTa, XLM-R, XLM)
    RoBERTa-style, as every family's spec pairs them. `ValueError` where the tokenizer names no such
    token (a bare id-level tokenizer): pass the family's `packing_style` or a `Preprocessor` instead.

    >>> class Tokenizer:
    ...     special_tokens = {"cls": "<s>", "sep": "</s>"}
    >>> packing_style_of(Tokenizer())
    'roberta'
    """
    start = (getattr(tokenizer, "special_tokens", None) or {}).get("cls")
    if isinstance(start, str) and start.startswith("["):
        return "bert"
    if isinstance(start, str) and start.startswith("<"):
        return "roberta"
    raise ValueError(f"cannot tell the packing style of {type(tokenizer).__name__} (start token {start!r}); pass "
                     "packing_style='bert' or 'roberta' (the model family's), or the model's Preprocessor")


class SegmentPacker:
    """Trim, join and pad one or more segments of token ids to `sequence_length`.

    Each call takes a list of segments, each a `tf.RaggedTensor` of shape
    `[batch, None]` (or a 1-D tensor for a single example), and returns a dict
    of int32 tensors `token_ids`, `segment_ids` and `padding_mask` of shape
    `[batch, sequence_length]` (or `[sequence_length]`).

    Example:

    >>> packer = SegmentPacker(8, cls_id=101, sep_id=102, pad_id=0, style="bert")
    >>> out = packer([tf.ragged.constant([[1, 2, 3, 4]]), tf.ragged.constant([[5, 6, 7]])])
    >>> out["token_ids"].numpy().tolist()
    [[101, 1, 2, 3, 102, 5, 6, 102]]
    >>> out["segment_ids"].numpy().tolist()
    [[0, 0, 0, 0, 0, 1, 1, 1]]

    Args:
        sequence_length: the fixed output length, special tokens included.
        cls_id: id of `[CLS]` / `<s>`, put at the start.
        sep_id: id of `[SEP]` / `</s>`, put after each segment (and, for
            "roberta", also before every segment after the first).
        pad_id: id used to fill the rest of the sequence.
        style: "bert" or "roberta", see the module docstring; no default: it is the model
            family's (`tfbert.architectures.get(NAME).packing_style`), or `packing_style_of(tokenizer)`.
        truncation: "longest_first" (the default, tfbert's one rule; see the
            module notes) or "round_robin", which removes one token at a time
            from each segment in turn (TF-Text `RoundRobinTrimmer`). Both cut
            from the end.
    """

    def __init__(
        self,
        sequence_length: int,
        cls_id: int,
        sep_id: int,
        pad_id: int,
        *,
        style: PackingStyle,
        truncation: Truncation = "longest_first",
    ):
        if truncation not in _TRIMMERS:
            raise ValueError(f"unknown truncation {truncation!r}; use one of {sorted(_TRIMMERS)}")
        num_special_tokens(style, 1)
        self.sequence_length = sequence_length
        self.cls_id = cls_id
        self.sep_id = sep_id
        self.pad_id = pad_id
        self.style = style
        self.truncation = truncation

    def __call__(self, segments: Sequence[tf.Tensor | tf.RaggedTensor]) -> dict[str, tf.Tensor]:
        if not segments:
            raise ValueError("SegmentPacker needs at least one segment")
        segments = [_as_ragged(s) for s in segments]
        unbatched = segments[0].shape.rank == 1
        if unbatched:
            segments = [tf.RaggedTensor.from_tensor(s[tf.newaxis]) for s in segments]
        packed = self._pack_batch(segments)
        if unbatched:
            packed = {name: value[0] for name, value in packed.items()}
        return packed

    def _pack_batch(self, segments: list[tf.RaggedTensor]) -> dict[str, tf.Tensor]:
        budget = self.sequence_length - num_special_tokens(self.style, len(segments))
        message = f"sequence_length leaves no room for {len(segments)} segments; pass a longer one"
        if isinstance(budget, int) and budget < len(segments):
            raise ValueError(f"sequence_length={self.sequence_length}: {message}")
        if not isinstance(budget, int):  # a tensor length (TF Hub's bert_pack_inputs): checked in the graph
            tf.debugging.assert_greater_equal(budget, len(segments), message=message)
        trimmed = _TRIMMERS[self.truncation](segments, budget)
        if self.style == "roberta":
            trimmed = [trimmed[0]] + [_prepend(s, self.sep_id) for s in trimmed[1:]]
        token_ids, segment_ids = tf_text.combine_segments(
            trimmed, start_of_sequence_id=self.cls_id, end_of_segment_id=self.sep_id
        )
        token_ids, padding_mask = tf_text.pad_model_inputs(
            token_ids, self.sequence_length, pad_value=self.pad_id
        )
        if self.style == "roberta":
            segment_ids = tf.zeros_like(token_ids)
        else:
            segment_ids, _ = tf_text.pad_model_inputs(segment_ids, self.sequence_length, pad_value=0)
        return {
            "token_ids": tf.cast(token_ids, tf.int32),
            "segment_ids": tf.cast(segment_ids, tf.int32),
            "padding_mask": tf.cast(padding_mask, tf.int32),
        }


def _as_ragged(segment: tf.Tensor | tf.RaggedTensor) -> tf.RaggedTensor | tf.Tensor:
    """int32 `[batch, None]` ragged ids, or a dense 1-D tensor for one example."""
    if isinstance(segment, tf.RaggedTensor):
        if segment.shape.rank == 3:
            segment = segment.merge_dims(-2, -1)
        return tf.cast(segment, tf.int32)
    segment = tf.convert_to_tensor(segment)
    segment = tf.cast(segment, tf.int32)
    if segment.shape.rank == 2:
        return tf.RaggedTensor.from_tensor(segment)
    return segment


def _prepend(segment: tf.RaggedTensor, token_id: int) -> tf.RaggedTensor:
    """`[x, y]` -> `[token_id, x, y]` in every row (empty rows too, so the layout never changes)."""
    marker = tf.fill([segment.nrows(), 1], tf.constant(token_id, segment.dtype))
    return tf.concat([tf.RaggedTensor.from_tensor(marker), segment], axis=1)
