"""Raw strings to encoder inputs inside the graph: tokenize, pack with special tokens, pad.

The names the exported signatures use are TF Hub's (`input_word_ids`, `input_mask`,
`input_type_ids`); tfbert's encoder names (`token_ids`, `padding_mask`, `segment_ids`)
stay inside the graph.

Example:
    >>> preprocessor = TextPreprocessor(WordPieceTokenizer("vocab.txt"), sequence_length=16)
    >>> preprocessor.pack(tf.constant(["hello world"]))["token_ids"].numpy()[0, :4]
    array([ 101, 7592, 2088,  102], dtype=int32)
"""

from __future__ import annotations

from typing import Mapping

import tensorflow as tf

from tfbert.data.packing import PackingStyle, SegmentPacker
from tfbert.text.base import Tokenizer, as_utf8

HUB_NAMES = {"token_ids": "input_word_ids", "padding_mask": "input_mask", "segment_ids": "input_type_ids"}
ENCODER_NAMES = {hub: name for name, hub in HUB_NAMES.items()}


def to_hub_names(inputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """tfbert encoder inputs renamed to TF Hub's BERT input names."""
    return {HUB_NAMES[name]: inputs[name] for name in HUB_NAMES}


def from_hub_names(inputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """TF Hub's BERT input names renamed to tfbert encoder inputs (int32)."""
    return {name: tf.cast(inputs[hub], tf.int32) for hub, name in ENCODER_NAMES.items()}


def packing_style(position_offset: int) -> PackingStyle:
    """RoBERTa-style encoders (positions offset past the padding id) use `<s> a </s></s> b </s>`."""
    return "roberta" if position_offset else "bert"


class TextPreprocessor(tf.Module):
    """Tokenizer + `SegmentPacker`: strings `[batch]` to int32 encoder inputs `[batch, sequence_length]`.

    Text longer than `sequence_length` is truncated (longest segment first, as the
    task features do); invalid UTF-8 is replaced by U+FFFD by the tokenizer.

    Example:
        >>> preprocessor = TextPreprocessor(tokenizer, sequence_length=128)
        >>> inputs = preprocessor.pack(tf.constant(["a question?"]), tf.constant(["an answer."]))
    """

    def __init__(self, tokenizer: Tokenizer, sequence_length: int, style: PackingStyle = "bert"):
        super().__init__(name="preprocessor")
        missing = [role for role in ("cls", "sep", "pad") if getattr(tokenizer, f"{role}_id") is None]
        if missing:
            raise ValueError(f"the tokenizer has no {', '.join(missing)} token, which packing needs")
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        ids = (sequence_length, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)
        # One segment is simply cut at the end; TF-Text's ShrinkLongestTrimmer fails to trace with one segment.
        self.packer = SegmentPacker(*ids, style=style, truncation="round_robin")
        self.pair_packer = SegmentPacker(*ids, style=style, truncation="longest_first")

    def tokenize(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        """`token_ids` `[batch, longest]` padded with the pad id, and `lengths` `[batch]`, both int32."""
        ids = self.tokenizer.tokenize(text)
        return {
            "token_ids": ids.to_tensor(default_value=self.tokenizer.pad_id),
            "lengths": tf.cast(ids.row_lengths(), tf.int32),
        }

    def pack_ids(self, *segments: tf.RaggedTensor) -> dict[str, tf.Tensor]:
        """Encoder inputs from already tokenized segments `[batch, None]`."""
        return (self.packer if len(segments) == 1 else self.pair_packer)(list(segments))

    def pack(self, text: tf.Tensor, text_pair: tf.Tensor | None = None) -> dict[str, tf.Tensor]:
        """Encoder inputs (`token_ids`, `segment_ids`, `padding_mask`) for one text or a pair per row."""
        segments = [self.tokenizer.tokenize(text)]
        if text_pair is not None:
            segments.append(self.tokenizer.tokenize(text_pair))
        return self.pack_ids(*segments)

    def trim_padding(self, inputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """`inputs` cut to the batch's longest real row, so serving work follows the text, not `sequence_length`.

        Attention masks padding out, so per-text outputs are the same; a batch of short
        texts then costs a fraction of a full-length one.
        """
        longest = tf.maximum(tf.reduce_max(tf.reduce_sum(inputs["padding_mask"], axis=1)), 1)
        return {name: value[:, :longest] for name, value in inputs.items()}

    def clean(self, text: tf.Tensor) -> tf.Tensor:
        """The strings the tokenizer's offsets point into: the input with invalid UTF-8 replaced."""
        return as_utf8(text)
