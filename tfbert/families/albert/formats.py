"""ALBERT's checkpoint formats: shared layer groups, the E -> H embedding mapping, the SOP head.

Example:
    >>> HUGGINGFACE.pretraining_class, KERAS_HUB.backbone_class
    ('AlbertForPreTraining', 'AlbertBackbone')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping

from tfbert.architectures.spec import Assignment, HuggingFaceFormat, KerasHubFormat, TF1Format
from tfbert.convert import weights
from tfbert.families.bert.formats import (GOOGLE_BERT_ACTIVATIONS, embedding_weights, google_bert_head_weights,
                                          google_embedding_weights, google_pooler_weights, keras_hub_block_names,
                                          keras_hub_embedding_weights, keras_hub_pooler_weights,
                                          pooler_classifier_weights, read_bert_fields, read_google_fields,
                                          read_keras_hub_fields, write_bert_fields, write_google_fields,
                                          write_keras_hub_fields)

if TYPE_CHECKING:
    from tfbert.config import EncoderConfig


def read_albert_config(hf: Mapping[str, Any]) -> dict[str, Any]:
    return dict(**read_bert_fields(hf), embedding_size=hf.get("embedding_size", 128), sharing="all",
                         num_hidden_groups=hf.get("num_hidden_groups", 1), inner_group_num=hf.get("inner_group_num", 1))


def write_albert_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "all":
        raise ValueError(f"Hugging Face ALBERT shares whole layers; sharing {encoder.sharing!r} has no equivalent")
    return {**write_bert_fields(encoder), "embedding_size": encoder.embedding_size,
            "num_hidden_groups": encoder.num_hidden_groups, "inner_group_num": encoder.inner_group_num}


def albert_block_names(base: str) -> weights.BlockNames:
    """The names of one block of `albert_layer_groups.{g}.albert_layers.{i}.` under `base`."""
    return weights.BlockNames(f"{base}attention.query", f"{base}attention.key", f"{base}attention.value",
                              f"{base}attention.dense", f"{base}attention.LayerNorm", f"{base}ffn",
                              f"{base}ffn_output", f"{base}full_layer_layer_norm")


def albert_encoder_weights(encoder, prefix: str, embeddings: bool = True) -> Iterator[Assignment]:
    """Embeddings, the E -> H mapping, one block per (group, inner layer), and the pooler."""
    if embeddings:
        yield from embedding_weights(encoder, prefix)
    yield from weights.dense(encoder.get_layer("embedding_projection"), f"{prefix}encoder.embedding_hidden_mapping_in")
    for group, inner, attention, feed_forward in shared_blocks(encoder):
        base = f"{prefix}encoder.albert_layer_groups.{group}.albert_layers.{inner}."
        yield from weights.block(attention, feed_forward, albert_block_names(base))
    yield from weights.dense(encoder.get_layer("pooler"), f"{prefix}pooler")


def albert_head_weights(model) -> Iterator[Assignment]:
    """`AlbertForPreTraining`'s masked-LM head (`predictions`) and SOP classifier."""
    yield from weights.masked_lm_head(model.get_layer("mlm_head"), "predictions.dense", "predictions.LayerNorm",
                                      "predictions.bias")
    if model.pair_objective:
        yield from weights.dense(model.get_layer(f"{model.pair_objective}_head").classifier,
                                 "sop_classifier.classifier")


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


def shared_blocks(encoder) -> Iterator[tuple[int, int, Any, Any]]:
    """`(group, inner, attention, feed_forward)` for every shared block of an ALBERT encoder."""
    config = encoder.config
    for group in range(config.num_hidden_groups):
        layer = next(i for i in range(config.num_layers) if config.group_of_layer(i) == group)
        for inner in range(config.inner_group_num):
            yield (group, inner, *encoder.block(layer, inner))


def google_albert_encoder_weights(encoder, prefix: str, embeddings: bool = True) -> Iterator[Assignment]:
    """Embeddings, `embedding_hidden_mapping_in` (when E != H), one block per (group, inner layer), the pooler."""
    if embeddings:
        yield from google_embedding_weights(encoder, prefix)
    if encoder.config.embedding_size != encoder.config.hidden_size:
        yield from weights.dense(encoder.get_layer("embedding_projection"),
                                 f"{prefix}encoder/embedding_hidden_mapping_in", weights.TENSORFLOW)
    for group, inner, attention, feed_forward in shared_blocks(encoder):
        base = f"{prefix}encoder/transformer/group_{group}/inner_group_{inner}/"
        yield from weights.block(attention, feed_forward, google_albert_block_names(base), weights.TENSORFLOW)
    yield from google_pooler_weights(encoder, prefix)


def read_keras_hub_albert_config(backbone: Mapping[str, Any]) -> dict[str, Any]:
    """`AlbertBackbone`'s arguments; it always projects the embeddings, so E must differ from H here."""
    if backbone["embedding_dim"] == backbone["hidden_dim"]:
        raise ValueError(f"keras-hub AlbertBackbone with embedding_dim = hidden_dim ({backbone['hidden_dim']}) keeps "
                         "an embedding projection that a tfbert encoder of equal widths does not have")
    return dict(**read_keras_hub_fields(backbone, dropout=0.0), embedding_size=backbone["embedding_dim"],
                         sharing="all", num_hidden_groups=backbone.get("num_groups", 1),
                         inner_group_num=backbone.get("num_inner_repetitions", 1))


def write_keras_hub_albert_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "all" or encoder.num_layers % encoder.num_hidden_groups or not encoder.pooler:
        raise ValueError("keras-hub AlbertBackbone shares whole layers in groups dividing num_layers, and has a pooler")
    return {**write_keras_hub_fields(encoder, "AlbertBackbone"), "embedding_dim": encoder.embedding_size,
            "num_groups": encoder.num_hidden_groups, "num_inner_repetitions": encoder.inner_group_num}


def keras_hub_albert_encoder_weights(encoder, prefix: str = "", embeddings: bool = True) -> Iterator[Assignment]:
    """Every variable of keras-hub's `AlbertBackbone`: `group_{g}_inner_layer_{i}` blocks."""
    if embeddings:
        yield from keras_hub_embedding_weights(encoder, prefix)
    yield from weights.dense(encoder.get_layer("embedding_projection"), f"{prefix}embedding_projection",
                             weights.KERAS_HUB)
    for group, inner, attention, feed_forward in shared_blocks(encoder):
        names = keras_hub_block_names(f"{prefix}group_{group}_inner_layer_{inner}")
        yield from weights.block(attention, feed_forward, names, weights.KERAS_HUB)
    yield from keras_hub_pooler_weights(encoder, prefix)


HUGGINGFACE = HuggingFaceFormat(
    model_type="albert",
    prefix="albert",
    read_config=read_albert_config,
    write_config=write_albert_config,
    encoder_weights=albert_encoder_weights,
    head_weights=albert_head_weights,
    class_prefix="Albert",
    pretraining_class="AlbertForPreTraining",
    classifier_weights=pooler_classifier_weights("albert", albert_encoder_weights),
)

TF1 = TF1Format(
    marker="bert/encoder/transformer/group_0/inner_group_0/attention_1/self/query/kernel",
    prefix="bert/",
    config_file="albert_config.json",
    read_config=read_google_albert_config,
    write_config=write_google_albert_config,
    encoder_weights=google_albert_encoder_weights,
    head_weights=google_bert_head_weights,
    lowercase=True,
)

KERAS_HUB = KerasHubFormat(
    backbone_class="AlbertBackbone",
    read_config=read_keras_hub_albert_config,
    write_config=write_keras_hub_albert_config,
    encoder_weights=keras_hub_albert_encoder_weights,
)
