"""The input names of exported signatures: TF Hub's, outside; tfbert's encoder names, inside the graph.

Strings become encoder inputs through the model's `tfbert.data.preprocessor.Preprocessor`
(the same one fine-tuning and pretraining use); the signatures name its outputs as TF Hub's
BERT models do (`input_word_ids`, `input_mask`, `input_type_ids`), while tfbert's encoder
names (`token_ids`, `padding_mask`, `segment_ids`) stay inside the graph.

Example:
    >>> from tfbert.finetuning.pretrained import load_pretrained_preprocessor
    >>> preprocessor = load_pretrained_preprocessor("all-MiniLM-L6-v2/", sequence_length=128)
    >>> to_hub_names(preprocessor.pack(tf.constant(["hello world"])))["input_word_ids"].shape
    TensorShape([1, 128])
"""

from __future__ import annotations

from typing import Mapping

import tensorflow as tf


HUB_NAMES = {"token_ids": "input_word_ids", "padding_mask": "input_mask", "segment_ids": "input_type_ids"}
ENCODER_NAMES = {hub: name for name, hub in HUB_NAMES.items()}


def to_hub_names(inputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """tfbert encoder inputs renamed to TF Hub's BERT input names."""
    return {HUB_NAMES[name]: inputs[name] for name in HUB_NAMES}


LANGUAGE_IDS = "input_language_ids"


def from_hub_names(inputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """TF Hub's BERT input names renamed to tfbert encoder inputs (int32); `input_language_ids`
    (XLM's per-token language ids) becomes `language_ids` where given."""
    renamed = {name: tf.cast(inputs[hub], tf.int32) for hub, name in ENCODER_NAMES.items()}
    if LANGUAGE_IDS in inputs:
        renamed["language_ids"] = tf.cast(inputs[LANGUAGE_IDS], tf.int32)
    return renamed
