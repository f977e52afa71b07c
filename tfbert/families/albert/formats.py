"""ALBERT's checkpoint formats: shared layer groups, the E -> H embedding mapping, the SOP head.

Example:
    >>> HUGGINGFACE.pretraining_class, KERAS_HUB.backbone_class
    ('AlbertForPreTraining', 'AlbertBackbone')
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping

from tfbert.architectures.spec import HuggingFaceFormat, KerasHubFormat, TF1Format
from tfbert.convert import weights
from tfbert.families.bert import formats as bert
from tfbert.families.bert.formats import (GOOGLE_BERT_ACTIVATIONS, TF1_HEAD_NAMES, keras_hub_block_names,
                                          pooler_classifier_weights, read_bert_fields, read_google_fields,
                                          read_keras_hub_fields, write_bert_fields, write_google_fields,
                                          write_keras_hub_fields)

if TYPE_CHECKING:
    from tfbert.config import EncoderConfig


def check_projected(embedding_size: int, hidden_size: int, layout: str) -> None:
    """`ValueError` unless E != H: `layout` (Hugging Face's, keras-hub's ALBERT) always projects the embeddings,
    and a tfbert encoder of equal widths has no projection to hold it."""
    if embedding_size == hidden_size:
        raise ValueError(f"{layout} always projects the embeddings to the hidden size; with embedding size = hidden "
                         f"size ({hidden_size}) a tfbert encoder has no embedding projection to hold it")


def read_albert_config(hf: Mapping[str, Any]) -> dict[str, Any]:
    check_projected(hf.get("embedding_size", 128), hf["hidden_size"], "Hugging Face ALBERT")
    return dict(**read_bert_fields(hf), embedding_size=hf.get("embedding_size", 128), sharing="all",
                         num_hidden_groups=hf.get("num_hidden_groups", 1), inner_group_num=hf.get("inner_group_num", 1))


def write_albert_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "all":
        raise ValueError(f"Hugging Face ALBERT shares whole layers; sharing {encoder.sharing!r} has no equivalent")
    check_projected(encoder.embedding_size, encoder.hidden_size, "Hugging Face ALBERT")
    return {**write_bert_fields(encoder), "embedding_size": encoder.embedding_size,
            "num_hidden_groups": encoder.num_hidden_groups, "inner_group_num": encoder.inner_group_num}


def albert_block_names(base: str) -> weights.BlockNames:
    """The names of one block of `albert_layer_groups.{g}.albert_layers.{i}.` under `base`."""
    return weights.BlockNames(f"{base}attention.query", f"{base}attention.key", f"{base}attention.value",
                              f"{base}attention.dense", f"{base}attention.LayerNorm", f"{base}ffn",
                              f"{base}ffn_output", f"{base}full_layer_layer_norm")


# `AlbertModel`: BERT's embeddings, the E -> H mapping, one block per (group, inner layer), the pooler.
HUGGINGFACE_NAMES = dataclasses.replace(
    bert.HUGGINGFACE_NAMES, blocks=albert_block_names("encoder.albert_layer_groups.{group}.albert_layers.{inner}."),
    projection="encoder.embedding_hidden_mapping_in", pooler="pooler", shared=True)


# `AlbertForPreTraining`'s masked-LM head (`predictions`) and SOP classifier.
HEAD_NAMES = weights.HeadNames("predictions.dense", "predictions.LayerNorm", "predictions.bias",
                               pair="sop_classifier.classifier")


# google-research/albert's `AlbertConfig` defaults, for fields an albert_config.json leaves out.
GOOGLE_ALBERT_DEFAULTS = {
    "embedding_size": 128, "hidden_size": 4096, "num_hidden_layers": 12, "num_hidden_groups": 1,
    "num_attention_heads": 64, "intermediate_size": 16384, "inner_group_num": 1, "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "max_position_embeddings": 512,
    "type_vocab_size": 2, "initializer_range": 0.02,
}


def read_google_albert_config(data: Mapping[str, Any]) -> dict[str, Any]:
    data = {**GOOGLE_ALBERT_DEFAULTS, **data}
    return dict(**read_google_fields(data, GOOGLE_ALBERT_DEFAULTS, GOOGLE_BERT_ACTIVATIONS),
                         embedding_size=data["embedding_size"], sharing="all",
                         num_hidden_groups=data["num_hidden_groups"], inner_group_num=data["inner_group_num"])


def write_google_albert_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "all" or not encoder.pooler:
        raise ValueError(f"Google's ALBERT shares whole layers and has a pooler; sharing {encoder.sharing!r}, "
                         f"pooler {encoder.pooler} have no equivalent")
    return {**write_google_fields(encoder, GOOGLE_BERT_ACTIVATIONS), "embedding_size": encoder.embedding_size,
            "num_hidden_groups": encoder.num_hidden_groups, "inner_group_num": encoder.inner_group_num}


def google_albert_block_names(base: str) -> weights.BlockNames:
    """The names of one block of `bert/encoder/transformer/group_{g}/inner_group_{i}/` (modeling.py's
    `attention_ffn_block`: `LayerNorm` after attention, `LayerNorm_1` after the feed-forward)."""
    return weights.BlockNames(f"{base}attention_1/self/query", f"{base}attention_1/self/key",
                              f"{base}attention_1/self/value", f"{base}attention_1/output/dense", f"{base}LayerNorm",
                              f"{base}ffn_1/intermediate/dense", f"{base}ffn_1/intermediate/output/dense",
                              f"{base}LayerNorm_1")


# Google's ALBERT: BERT's embeddings and pooler under `bert/`, `embedding_hidden_mapping_in`, shared blocks.
TF1_NAMES = dataclasses.replace(
    bert.TF1_NAMES, blocks=google_albert_block_names("encoder/transformer/group_{group}/inner_group_{inner}/"),
    projection="encoder/embedding_hidden_mapping_in", shared=True)


def read_keras_hub_albert_config(backbone: Mapping[str, Any]) -> dict[str, Any]:
    """`AlbertBackbone`'s arguments; it always projects the embeddings, so E must differ from H here."""
    check_projected(backbone["embedding_dim"], backbone["hidden_dim"], "keras-hub AlbertBackbone")
    return dict(**read_keras_hub_fields(backbone, dropout=0.0), embedding_size=backbone["embedding_dim"],
                         sharing="all", num_hidden_groups=backbone.get("num_groups", 1),
                         inner_group_num=backbone.get("num_inner_repetitions", 1))


def write_keras_hub_albert_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "all" or encoder.num_layers % encoder.num_hidden_groups or not encoder.pooler:
        raise ValueError("keras-hub AlbertBackbone shares whole layers in groups dividing num_layers, and has a pooler")
    check_projected(encoder.embedding_size, encoder.hidden_size, "keras-hub AlbertBackbone")
    return {**write_keras_hub_fields(encoder, "AlbertBackbone"), "embedding_dim": encoder.embedding_size,
            "num_groups": encoder.num_hidden_groups, "num_inner_repetitions": encoder.inner_group_num}


# keras-hub `AlbertBackbone`: BERT's backbone variables with `embedding_projection` and
# `group_{g}_inner_layer_{i}` blocks.
KERAS_HUB_NAMES = dataclasses.replace(
    bert.KERAS_HUB_NAMES, blocks=keras_hub_block_names("group_{group}_inner_layer_{inner}"),
    projection="embedding_projection", shared=True)


HUGGINGFACE = HuggingFaceFormat(
    model_type="albert",
    prefix="albert",
    read_config=read_albert_config,
    write_config=write_albert_config,
    encoder_weights=HUGGINGFACE_NAMES,
    head_weights=HEAD_NAMES,
    class_prefix="Albert",
    pretraining_class="AlbertForPreTraining",
    classifier_weights=pooler_classifier_weights("albert", HUGGINGFACE_NAMES),
)

TF1 = TF1Format(
    marker="bert/encoder/transformer/group_0/inner_group_0/attention_1/self/query/kernel",
    prefix="bert/",
    config_file="albert_config.json",
    read_config=read_google_albert_config,
    write_config=write_google_albert_config,
    encoder_weights=TF1_NAMES,
    head_weights=TF1_HEAD_NAMES,
    lowercase=True,
)

KERAS_HUB = KerasHubFormat(
    backbone_class="AlbertBackbone",
    read_config=read_keras_hub_albert_config,
    write_config=write_keras_hub_albert_config,
    encoder_weights=KERAS_HUB_NAMES,
)
