"""DeBERTa-v3's Hugging Face format (`deberta-v2`): relative-attention fields and weight names.

Example:
    >>> HUGGINGFACE.model_type, HUGGINGFACE.prefix
    ('deberta-v2', 'deberta')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping

from tfbert.architectures.spec import Assignment, HuggingFaceFormat
from tfbert.convert import weights
from tfbert.families.bert.formats import HF_ACTIVATIONS, bert_head_weights, read_bert_fields, write_bert_fields

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


def deberta_block_names(base: str) -> weights.BlockNames:
    """`DebertaV2Layer`'s names under `base` (`deberta.encoder.layer.3.`)."""
    return weights.BlockNames(f"{base}attention.self.query_proj", f"{base}attention.self.key_proj",
                              f"{base}attention.self.value_proj", f"{base}attention.output.dense",
                              f"{base}attention.output.LayerNorm", f"{base}intermediate.dense",
                              f"{base}output.dense", f"{base}output.LayerNorm")


def deberta_encoder_weights(encoder, prefix: str, embeddings: bool = True) -> Iterator[Assignment]:
    """`DebertaV2Model`: embeddings, the relative table and its LayerNorm, the layers; no pooler."""
    if embeddings:
        layer = encoder.get_layer("embeddings")
        yield from weights.tensor(layer.token_embedding.embeddings, f"{prefix}embeddings.word_embeddings.weight")
        if layer.segment_embedding is not None:
            yield from weights.tensor(layer.segment_embedding.embeddings,
                                      f"{prefix}embeddings.token_type_embeddings.weight")
        yield from weights.layer_norm(layer.layer_norm, f"{prefix}embeddings.LayerNorm")
    relative = encoder.get_layer("relative_positions")
    yield from weights.tensor(relative.embeddings.embeddings, f"{prefix}encoder.rel_embeddings.weight")
    yield from weights.layer_norm(relative.layer_norm, f"{prefix}encoder.LayerNorm")
    for index in range(encoder.config.num_layers):
        base = f"{prefix}encoder.layer.{index}."
        attention, feed_forward = encoder.block(index)
        yield from weights.block(attention, feed_forward, deberta_block_names(base))
        if attention.position_query is not None:
            yield from weights.dense(attention.position_query, f"{base}attention.self.pos_query_proj")
            yield from weights.dense(attention.position_key, f"{base}attention.self.pos_key_proj")


def deberta_head_weights(model) -> Iterator[Assignment]:
    """`DebertaV2ForMaskedLM`'s (legacy, transformers' default) head: `cls.predictions.*`, BERT's names."""
    if not hasattr(model, "pair_objective"):
        raise ValueError("a Hugging Face DeBERTa checkpoint holds a masked-LM head; build the pretraining model "
                         "with objectives ['mlm'] to load or save it")
    yield from bert_head_weights(model)


HUGGINGFACE = HuggingFaceFormat(
    model_type="deberta-v2",
    prefix="deberta",
    class_prefix="DebertaV2",
    pretraining_class="DebertaV2ForMaskedLM",
    pretraining_pooler=False,
    read_config=read_deberta_config,
    write_config=write_deberta_config,
    encoder_weights=deberta_encoder_weights,
    head_weights=deberta_head_weights,
    head_objectives=lambda hf: ("mlm",),
)
