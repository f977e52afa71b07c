"""ALBERT (Lan et al. 2020, https://arxiv.org/abs/1909.11942): shared layers, factorized embeddings, MLM + SOP."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from tfbert.architectures.bert import build_mlm_pretraining_model, embedding_weights, read_bert_fields, write_bert_fields
from tfbert.architectures.registry import register
from tfbert.architectures.spec import ArchitectureSpec, Assignment, ExampleRecipe, HuggingFaceFormat
from tfbert.config import EncoderConfig
from tfbert.convert import weights


def read_albert_config(hf: Mapping[str, Any]) -> EncoderConfig:
    return EncoderConfig(**read_bert_fields(hf), embedding_size=hf.get("embedding_size", 128), sharing="all",
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
    config = encoder.config
    if embeddings:
        yield from embedding_weights(encoder, prefix)
    yield from weights.dense(encoder.get_layer("embedding_projection"), f"{prefix}encoder.embedding_hidden_mapping_in")
    for group in range(config.num_hidden_groups):
        layer = next(i for i in range(config.num_layers) if config.group_of_layer(i) == group)
        for inner in range(config.inner_group_num):
            base = f"{prefix}encoder.albert_layer_groups.{group}.albert_layers.{inner}."
            yield from weights.block(*encoder.block(layer, inner), albert_block_names(base))
    yield from weights.dense(encoder.get_layer("pooler"), f"{prefix}pooler")


def albert_head_weights(model) -> Iterator[Assignment]:
    """`AlbertForPreTraining`'s masked-LM head (`predictions`) and SOP classifier."""
    yield from weights.masked_lm_head(model.get_layer("mlm_head"), "predictions.dense", "predictions.LayerNorm",
                                      "predictions.bias")
    if model.pair_objective:
        yield from weights.dense(model.get_layer(f"{model.pair_objective}_head").classifier,
                                 "sop_classifier.classifier")


SPEC = register(ArchitectureSpec(
    name="albert",
    summary="ALBERT: cross-layer sharing, factorized embeddings, masked-LM (n-grams) + sentence order, SentencePiece",
    tokenizer="sentencepiece",
    packing_style="bert",
    encoder_defaults={"sharing": "all", "embedding_size": 128},
    objectives=("mlm", "sop"),
    default_objectives=("mlm", "sop"),
    examples=ExampleRecipe("sop", masking_unit="ngram", data_label="sentence_order_labels", model_label="sop_labels"),
    pretraining_model=build_mlm_pretraining_model,
    pretraining_models=("PretrainingModel",),
    optimizer="albert",
    export_tasks=("fill_mask",),
    formats={"huggingface": HuggingFaceFormat(
        model_type="albert",
        prefix="albert",
        read_config=read_albert_config,
        write_config=write_albert_config,
        encoder_weights=albert_encoder_weights,
        head_weights=albert_head_weights,
    )},
))
