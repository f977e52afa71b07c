"""RoBERTa's checkpoint formats (Hugging Face, keras-hub), also XLM-R's under other names.

Example:
    >>> HUGGINGFACE.pretraining_class, HUGGINGFACE.pretraining_pooler
    ('RobertaForMaskedLM', False)
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterator, Mapping

import numpy as np

from tfbert.architectures.spec import Assignment, KerasHubFormat
from tfbert.convert import weights
from tfbert.families.bert import formats as bert
from tfbert.families.bert.formats import bert_layout, read_bert_fields, read_keras_hub_fields, write_keras_hub_fields

if TYPE_CHECKING:
    from tfbert.config import EncoderConfig

# RoBERTa's embedding layout, also XLM-R's: one type row, padding id 1, positions from pad_id + 1.
ROBERTA_ENCODER_DEFAULTS = {"type_vocab_size": 1, "pad_id": 1, "position_offset": 2}


def read_roberta_config(hf: Mapping[str, Any]) -> dict[str, Any]:
    fields = read_bert_fields(hf)
    return dict(**fields, position_offset=fields["pad_id"] + 1)


# `RobertaForMaskedLM`'s `lm_head` (no sentence-pair head).
HEAD_NAMES = weights.HeadNames("lm_head.dense", "lm_head.layer_norm", "lm_head.bias")


# The encoder of `RobertaForSequenceClassification`: BERT's names without a pooler (its `classifier.dense` is ours).
CLASSIFIER_ENCODER_NAMES = dataclasses.replace(bert.HUGGINGFACE_NAMES, pooler=None)


def roberta_classifier_weights(encoder, head, pooling: str) -> Iterator[Assignment]:
    """`RobertaForSequenceClassification`: `classifier.dense` + tanh on the first token, then `classifier.out_proj`,
    which is tfbert's pooler (a tanh dense on the first token) and its head; the encoder has no pooler there."""
    if pooling != "pooler":
        raise ValueError(f"Hugging Face's RoBERTa sequence classifier reads the first token through a tanh dense layer "
                         f"(tfbert's pooler); this model's head reads {pooling!r} pooling")
    yield from CLASSIFIER_ENCODER_NAMES(encoder, "roberta.")
    yield from weights.dense(encoder.get_layer("pooler"), "classifier.dense")
    yield from weights.dense(head, "classifier.out_proj")


def roberta_format(model_type: str, class_prefix: str):
    """RoBERTa's Hugging Face layout under `model_type` and the class names `class_prefix...` (also XLM-R's)."""
    return bert_layout(model_type, "roberta", read_roberta_config, HEAD_NAMES, class_prefix=class_prefix,
                       pretraining_class=f"{class_prefix}ForMaskedLM", pretraining_pooler=False,
                       classifier_weights=roberta_classifier_weights)


# keras-hub's RoBERTa-style backbones: LayerNorm epsilon 1e-5, exact GELU, positions from 0 for every token.
KERAS_HUB_ROBERTA_EPSILON = 1e-5


def read_keras_hub_roberta_config(backbone: Mapping[str, Any]) -> dict[str, Any]:
    """`RobertaBackbone`'s (and `XLMRobertaBackbone`'s) arguments as a RoBERTa encoder without a pooler.

    keras-hub numbers positions from 0 and keeps no padding rows; tfbert's RoBERTa numbers real
    tokens from `position_offset` (2), so its table is keras-hub's with two rows in front: the same
    outputs on right-padded batches, and a table laid out as in fairseq and Hugging Face.
    """
    fields = read_keras_hub_fields(backbone)
    fields.update(activation="gelu", layer_norm_epsilon=KERAS_HUB_ROBERTA_EPSILON, pooler=False,
                  max_positions=fields["max_positions"] + ROBERTA_ENCODER_DEFAULTS["position_offset"],
                  **ROBERTA_ENCODER_DEFAULTS)
    return dict(**fields)


def write_keras_hub_roberta_config(encoder: EncoderConfig) -> dict[str, Any]:
    layout = {name: getattr(encoder, name) for name in ROBERTA_ENCODER_DEFAULTS}
    if layout != ROBERTA_ENCODER_DEFAULTS or encoder.sharing != "none" or encoder.embedding_size != encoder.hidden_size:
        raise ValueError(f"keras-hub RobertaBackbone is RoBERTa's layout ({ROBERTA_ENCODER_DEFAULTS}), without "
                         f"sharing or factorized embeddings; got {layout}")
    arguments = write_keras_hub_fields(encoder, "RobertaBackbone", "gelu", KERAS_HUB_ROBERTA_EPSILON)
    del arguments["num_segments"]
    arguments["max_sequence_length"] -= ROBERTA_ENCODER_DEFAULTS["position_offset"]
    return arguments


def with_padding_rows(table: np.ndarray) -> np.ndarray:
    """keras-hub's position table with `position_offset` zero rows in front (see `read_keras_hub_roberta_config`)."""
    rows = np.zeros((ROBERTA_ENCODER_DEFAULTS["position_offset"], table.shape[1]), dtype=table.dtype)
    return np.concatenate([rows, table])


# keras-hub `RobertaBackbone`'s variable paths: its position table without the padding rows, no segment table
# (tfbert's one row is zero), BertBackbone's blocks, no pooler.
KERAS_HUB_NAMES = weights.EncoderNames(
    weights.KERAS_HUB,
    weights.EmbeddingNames("embeddings/token_embedding/embeddings", "embeddings_layer_norm",
                           position="embeddings/position_embedding/embeddings", position_fn=with_padding_rows,
                           segment=weights.ZERO),
    bert.KERAS_HUB_NAMES.blocks,
)


def keras_hub_roberta_format(backbone_class: str, tokenizer_ids_match: bool = True) -> KerasHubFormat:
    """RoBERTa's keras-hub layout under `backbone_class` (`RobertaBackbone`, `XLMRobertaBackbone`)."""
    return KerasHubFormat(
        backbone_class=backbone_class,
        read_config=read_keras_hub_roberta_config,
        write_config=write_keras_hub_roberta_config,
        encoder_weights=KERAS_HUB_NAMES,
        tokenizer_ids_match=tokenizer_ids_match,
    )


HUGGINGFACE = roberta_format("roberta", "Roberta")
KERAS_HUB = keras_hub_roberta_format("RobertaBackbone")
