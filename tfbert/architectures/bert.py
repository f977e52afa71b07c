"""BERT (Devlin et al. 2019, https://arxiv.org/abs/1810.04805): MLM + next-sentence prediction.

Also the home of the Hugging Face layout most families share (`config.json` fields, embedding,
layer and pooler names), which ALBERT, RoBERTa, ELECTRA, SpanBERT and XLM-R build on.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from tfbert.architectures.registry import register
from tfbert.architectures.spec import ArchitectureSpec, Assignment, ExampleRecipe, HuggingFaceFormat
from tfbert.config import ACTIVATIONS, EncoderConfig
from tfbert.convert import weights

# Hugging Face `hidden_act` names and the tfbert activation each one is.
HF_ACTIVATIONS = {
    **{name: name for name in ACTIVATIONS},
    "gelu_pytorch_tanh": "gelu_new",
    "gelu_fast": "gelu_new",
    "swish": "silu",
}


def build_mlm_pretraining_model(config, objectives: tuple[str, ...], seed: int | None, dtype: str | None):
    """`PretrainingModel`: MLM plus, when asked, one sentence-pair objective (NSP or SOP)."""
    from tfbert.models.pretraining import PretrainingModel

    return PretrainingModel(config, objectives=objectives, dtype=dtype)


def read_bert_fields(hf: Mapping[str, Any]) -> dict[str, Any]:
    """The `EncoderConfig` fields of a BERT-style `config.json` (families update a few)."""
    activation = hf.get("hidden_act", "gelu")
    if activation not in HF_ACTIVATIONS:
        raise ValueError(f"Hugging Face hidden_act {activation!r} is not supported; supported: "
                         f"{', '.join(HF_ACTIVATIONS)}")
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"position_embedding_type {hf['position_embedding_type']!r} is not supported; only 'absolute'")
    return dict(
        vocab_size=hf["vocab_size"],
        hidden_size=hf["hidden_size"],
        num_layers=hf["num_hidden_layers"],
        num_heads=hf["num_attention_heads"],
        intermediate_size=hf["intermediate_size"],
        activation=HF_ACTIVATIONS[activation],
        dropout_rate=hf.get("hidden_dropout_prob", 0.1),
        attention_dropout_rate=hf.get("attention_probs_dropout_prob", 0.1),
        max_positions=hf.get("max_position_embeddings", 512),
        type_vocab_size=hf.get("type_vocab_size", 2),
        layer_norm_epsilon=hf.get("layer_norm_eps", 1e-12),
        initializer_range=hf.get("initializer_range", 0.02),
        pad_id=hf.get("pad_token_id") or 0,
    )


def write_bert_fields(encoder: EncoderConfig) -> dict[str, Any]:
    """A BERT-style `config.json` mapping of `encoder` (without `model_type`), unchecked."""
    return dict(
        vocab_size=encoder.vocab_size,
        hidden_size=encoder.hidden_size,
        num_hidden_layers=encoder.num_layers,
        num_attention_heads=encoder.num_heads,
        intermediate_size=encoder.intermediate_size,
        hidden_act=encoder.activation,
        hidden_dropout_prob=encoder.dropout_rate,
        attention_probs_dropout_prob=encoder.attention_dropout_rate,
        max_position_embeddings=encoder.max_positions,
        type_vocab_size=encoder.type_vocab_size,
        layer_norm_eps=encoder.layer_norm_epsilon,
        initializer_range=encoder.initializer_range,
        pad_token_id=encoder.pad_id,
    )


def write_plain_config(model_type: str):
    """`write_config` of a family with neither layer sharing nor factorized embeddings in HF (BERT, RoBERTa)."""
    def write(encoder: EncoderConfig) -> dict[str, Any]:
        if encoder.sharing != "none" or encoder.embedding_size != encoder.hidden_size:
            raise ValueError(f"Hugging Face {model_type} has neither layer sharing nor factorized embeddings")
        return write_bert_fields(encoder)
    return write


def read_bert_config(hf: Mapping[str, Any]) -> EncoderConfig:
    return EncoderConfig(**read_bert_fields(hf))


def embedding_weights(encoder, prefix: str) -> Iterator[Assignment]:
    """`embeddings.{word,position,token_type}_embeddings` and `embeddings.LayerNorm`."""
    embeddings = encoder.get_layer("embeddings")
    yield from weights.tensor(embeddings.token_embedding.embeddings, f"{prefix}embeddings.word_embeddings.weight")
    yield from weights.tensor(embeddings.position_embedding.embeddings,
                              f"{prefix}embeddings.position_embeddings.weight")
    if embeddings.segment_embedding is not None:
        yield from weights.tensor(embeddings.segment_embedding.embeddings,
                                  f"{prefix}embeddings.token_type_embeddings.weight")
    yield from weights.layer_norm(embeddings.layer_norm, f"{prefix}embeddings.LayerNorm")


def layer_weights(encoder, prefix: str) -> Iterator[Assignment]:
    """`encoder.layer.{i}.*`, one block per transformer layer."""
    for layer in range(encoder.config.num_layers):
        yield from weights.block(*encoder.block(layer), weights.BlockNames.bert(f"{prefix}encoder.layer.{layer}."))


def pooler_weights(encoder, prefix: str, name: str = "pooler.dense") -> Iterator[Assignment]:
    if encoder.config.pooler:
        yield from weights.dense(encoder.get_layer("pooler"), f"{prefix}{name}")


def bert_encoder_weights(encoder, prefix: str, embeddings: bool = True) -> Iterator[Assignment]:
    """Every weight of a BERT-layout encoder (also RoBERTa's, XLM-R's and SpanBERT's)."""
    if embeddings:
        yield from embedding_weights(encoder, prefix)
    yield from layer_weights(encoder, prefix)
    yield from pooler_weights(encoder, prefix)


def bert_head_weights(model) -> Iterator[Assignment]:
    """`BertForPreTraining`'s masked-LM head (`cls.predictions`) and NSP classifier (`cls.seq_relationship`)."""
    yield from weights.masked_lm_head(model.get_layer("mlm_head"), "cls.predictions.transform.dense",
                                      "cls.predictions.transform.LayerNorm", "cls.predictions.bias")
    if model.pair_objective:
        yield from weights.dense(model.get_layer(f"{model.pair_objective}_head").classifier, "cls.seq_relationship")


def bert_layout(model_type: str, prefix: str, read_config=read_bert_config, head_weights=bert_head_weights,
                **options: Any) -> HuggingFaceFormat:
    """A Hugging Face format with BERT's encoder layout, neither sharing nor factorized embeddings
    (BERT, RoBERTa, XLM-R, SpanBERT); `options` are `HuggingFaceFormat`'s other fields.

    Example:
        >>> bert_layout("mybert", "bert").write_config(load_config("bert_tiny").encoder)["num_hidden_layers"]
        2
    """
    return HuggingFaceFormat(model_type=model_type, prefix=prefix, read_config=read_config,
                             write_config=write_plain_config(model_type), encoder_weights=bert_encoder_weights,
                             head_weights=head_weights, **options)


HUGGINGFACE = bert_layout("bert", "bert")

SPEC = register(ArchitectureSpec(
    name="bert",
    summary="BERT: masked-LM + next-sentence prediction, WordPiece",
    tokenizer="wordpiece",
    packing_style="bert",
    objectives=("mlm", "nsp"),
    default_objectives=("mlm", "nsp"),
    examples=ExampleRecipe("nsp", data_label="next_sentence_labels", model_label="nsp_labels"),
    pretraining_model=build_mlm_pretraining_model,
    pretraining_models=("PretrainingModel",),
    optimizer="bert",
    export_tasks=("fill_mask",),
    formats={"huggingface": HUGGINGFACE},
))
