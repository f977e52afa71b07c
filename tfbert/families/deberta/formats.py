"""DeBERTa-v3's Hugging Face format (`deberta-v2`): relative-attention fields and weight names.

Example:
    >>> HUGGINGFACE.model_type, HUGGINGFACE.prefix
    ('deberta-v2', 'deberta')
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from tfbert.architectures.spec import Assignment, HuggingFaceFormat
from tfbert.convert import weights
from tfbert.families.bert.formats import HEAD_NAMES, HF_ACTIVATIONS, read_bert_fields, write_bert_fields

if TYPE_CHECKING:
    from tfbert.config import EncoderConfig

def _listed(value: Any) -> set[str]:
    """`pos_att_type` as a set: HF writes `["p2c", "c2p"]` or `"p2c|c2p"`."""
    if isinstance(value, str):
        return {part.strip() for part in value.lower().split("|") if part.strip()}
    return {str(part).lower() for part in value or ()}


def check_huggingface_deberta(hf: Mapping[str, Any]) -> None:
    """`ValueError` for a `deberta-v2` config.json outside what tfbert's DeBERTa holds (v3's layout)."""
    problems = {
        "relative_attention must be true": not hf.get("relative_attention", False),
        "pos_att_type must be p2c|c2p": _listed(hf.get("pos_att_type")) != {"p2c", "c2p"},
        "position_biased_input must be false": hf.get("position_biased_input", True),
        "norm_rel_ebd must be layer_norm": "layer_norm" not in str(hf.get("norm_rel_ebd", "none")),
        "conv_kernel_size must be 0": hf.get("conv_kernel_size", 0),
        "embedding_size must equal hidden_size": hf.get("embedding_size", hf["hidden_size"]) != hf["hidden_size"],
        "attention_head_size must be hidden_size / num_attention_heads":
            hf.get("attention_head_size", hf["hidden_size"] // hf["num_attention_heads"])
            != hf["hidden_size"] // hf["num_attention_heads"],
    }
    failed = [problem for problem, bad in problems.items() if bad]
    if failed:
        raise ValueError(f"unsupported DeBERTa config ({'; '.join(failed)}); tfbert reads DeBERTa-v3's layout")


def read_deberta_config(hf: Mapping[str, Any]) -> dict[str, Any]:
    check_huggingface_deberta(hf)
    fields = read_bert_fields({**hf, "hidden_act": hf.get("hidden_act", "gelu")})
    return dict(
        **{**fields, "layer_norm_epsilon": hf.get("layer_norm_eps", 1e-7), "type_vocab_size": hf.get("type_vocab_size", 0)},
        positions="relative",
        position_buckets=max(0, hf.get("position_buckets", -1)),
        max_relative_positions=max(0, hf.get("max_relative_positions", -1)),
        share_attention_key=bool(hf.get("share_att_key", False)),
        pooler=False,
    )


def write_deberta_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.positions != "relative" or encoder.norm_first or encoder.feed_forward != "dense":
        raise ValueError("Hugging Face DeBERTa-v2 has relative positions, post-LN blocks and a dense feed-forward")
    if encoder.sharing != "none" or encoder.embedding_size != encoder.hidden_size or encoder.num_languages:
        raise ValueError("Hugging Face DeBERTa-v2 has neither layer sharing, factorized nor language embeddings")
    if encoder.activation not in HF_ACTIVATIONS:
        raise ValueError(f"activation {encoder.activation!r} has no Hugging Face name")
    return {**write_bert_fields(encoder), "relative_attention": True, "pos_att_type": ["p2c", "c2p"],
            "position_biased_input": False, "position_buckets": encoder.position_buckets or -1,
            "max_relative_positions": encoder.max_relative_positions or -1,
            "share_att_key": encoder.share_attention_key, "norm_rel_ebd": "layer_norm"}


# `DebertaV2Layer`'s self-attention scope: BERT's names but `{query,key,value}_proj` and `pos_{query,key}_proj`.
ATTENTION = "encoder.layer.{layer}.attention.self."
# `DebertaV2Model`: word and token-type embeddings (no position table), the shared relative table and its
# LayerNorm, BERT's blocks with DeBERTa's projections (`pos_*_proj` unless the key is shared); no pooler.
HUGGINGFACE_NAMES = weights.EncoderNames(
    weights.PYTORCH,
    weights.EmbeddingNames("embeddings.word_embeddings.weight", "embeddings.LayerNorm",
                           segment="embeddings.token_type_embeddings.weight"),
    dataclasses.replace(weights.BlockNames.bert("encoder.layer.{layer}."), query=f"{ATTENTION}query_proj",
                        key=f"{ATTENTION}key_proj", value=f"{ATTENTION}value_proj",
                        position_query=f"{ATTENTION}pos_query_proj", position_key=f"{ATTENTION}pos_key_proj"),
    relative=("encoder.rel_embeddings.weight", "encoder.LayerNorm"),
)


def deberta_head_weights(model) -> Iterator[Assignment]:
    """`DebertaV2ForMaskedLM`'s (legacy, transformers' default) head: `cls.predictions.*`, BERT's names."""
    if not hasattr(model, "pair_objective"):
        raise ValueError("a Hugging Face DeBERTa checkpoint holds a masked-LM head; build the pretraining model "
                         "with objectives ['mlm'] to load or save it")
    yield from HEAD_NAMES(model)


HUGGINGFACE = HuggingFaceFormat(
    model_type="deberta-v2",
    prefix="deberta",
    class_prefix="DebertaV2",
    pretraining_class="DebertaV2ForMaskedLM",
    pretraining_pooler=False,
    read_config=read_deberta_config,
    write_config=write_deberta_config,
    encoder_weights=HUGGINGFACE_NAMES,
    head_weights=deberta_head_weights,
    head_objectives=lambda hf: ("mlm",),
    tokenizer_files={"spm.model": "tfbert.families.deberta.tokenizer:read_deberta_tokenizer"},
)
