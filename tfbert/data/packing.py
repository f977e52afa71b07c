"""Pack token-id segments into fixed-length model inputs with special tokens.

Two layouts cover the BERT family:

* ``"bert"`` (BERT, ALBERT, ELECTRA, SpanBERT): ``[CLS] a [SEP] b [SEP]``,
  segment ids 0 for ``[CLS] a [SEP]`` and 1, 2, ... for later segments.
* ``"roberta"`` (RoBERTa, XLM-R, XLM): ``<s> a </s></s> b </s>``, a single
  segment type, so every segment id is 0.

Truncation uses TF-Text's trimmers, combination ``combine_segments`` and
padding ``pad_model_inputs``; everything is graph ops with static output shapes.
"""

from __future__ import annotations

from typing import Literal, Sequence

import tensorflow as tf
import tensorflow_text as tf_text

PackingStyle = Literal["bert", "roberta"]
Truncation = Literal["round_robin", "longest_first"]

_TRIMMERS = {
    "round_robin": tf_text.RoundRobinTrimmer,
    "longest_first": tf_text.ShrinkLongestTrimmer,
}


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


class SegmentPacker:
    """Trim, join and pad one or more segments of token ids to `sequence_length`.

    Each call takes a list of segments, each a `tf.RaggedTensor` of shape
    `[batch, None]` (or a 1-D tensor for a single example), and returns a dict
    of int32 tensors `token_ids`, `segment_ids` and `padding_mask` of shape
    `[batch, sequence_length]` (or `[sequence_length]`).

    Example:

    >>> packer = SegmentPacker(8, cls_id=101, sep_id=102, pad_id=0)
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
        style: "bert" or "roberta", see the module docstring.
        truncation: "round_robin" removes one token at a time from each
            segment in turn (TF-Text `RoundRobinTrimmer`); "longest_first"
            trims the currently longest segment first (`ShrinkLongestTrimmer`),
            like Hugging Face's `longest_first`. Both cut from the end.
    """

    def __init__(
        self,
        sequence_length: int,
        cls_id: int,
        sep_id: int,
        pad_id: int,
        style: PackingStyle = "bert",
        truncation: Truncation = "round_robin",
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
        if budget < len(segments):
            raise ValueError(
                f"sequence_length={self.sequence_length} leaves no room for {len(segments)} segments"
            )
        trimmed = _TRIMMERS[self.truncation](budget).trim(segments)
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
