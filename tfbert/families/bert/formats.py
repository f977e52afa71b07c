"""BERT's checkpoint formats (Hugging Face, Google's TF1, keras-hub): config files and weight names.

Also the home of the layouts most families share (`config.json` fields, embedding, layer and
pooler names), which ALBERT, RoBERTa, ELECTRA, SpanBERT, XLM-R and DeBERTa build on.

Example:
    >>> HUGGINGFACE.class_name("ForSequenceClassification"), TF1.config_file
    ('BertForSequenceClassification', 'bert_config.json')
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from tfbert.architectures.spec import ACTIVATIONS, Assignment, HuggingFaceFormat, KerasHubFormat, TF1Format
from tfbert.convert import weights

if TYPE_CHECKING:
    from tfbert.config import EncoderConfig

# Hugging Face `hidden_act` names and the tfbert activation each one is.
HF_ACTIVATIONS = {
    **{name: name for name in ACTIVATIONS},
    "gelu_pytorch_tanh": "gelu_new",
    "gelu_fast": "gelu_new",
    "swish": "silu",
}


# The `EncoderConfig` fields a BERT-style config holds, by their names there: Hugging Face's `BertConfig` kept
# those of Google's `bert_config.json` (`hidden_act` is translated through the format's activation names).
BERT_CONFIG_NAMES = {
    "vocab_size": "vocab_size", "hidden_size": "hidden_size", "num_layers": "num_hidden_layers",
    "num_heads": "num_attention_heads", "intermediate_size": "intermediate_size", "activation": "hidden_act",
    "dropout_rate": "hidden_dropout_prob", "attention_dropout_rate": "attention_probs_dropout_prob",
    "max_positions": "max_position_embeddings", "type_vocab_size": "type_vocab_size",
    "initializer_range": "initializer_range",
}
# transformers' `BertConfig` defaults, for the fields a `config.json` may leave out.
HF_BERT_DEFAULTS = {
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 512, "type_vocab_size": 2, "initializer_range": 0.02,
}


def read_bert_config_names(data: Mapping[str, Any], defaults: Mapping[str, Any], activations: Mapping[str, str],
                           source: str = "") -> dict[str, Any]:
    """The `EncoderConfig` fields of `BERT_CONFIG_NAMES` in `data` (missing ones from `defaults`; a missing
    size is a `KeyError`), `hidden_act` read through `activations` (else a `ValueError` that starts with `source`)."""
    data = {**defaults, **data}
    fields = {ours: data[theirs] for ours, theirs in BERT_CONFIG_NAMES.items()}
    if fields["activation"] not in activations:
        raise ValueError(f"{source}hidden_act {fields['activation']!r} is not supported; supported: "
                         f"{', '.join(activations)}")
    return {**fields, "activation": activations[fields["activation"]]}


def write_bert_config_names(encoder: EncoderConfig, activations: Mapping[str, str]) -> dict[str, Any]:
    """`BERT_CONFIG_NAMES`'s fields of `encoder`, `hidden_act` under its name in `activations` (theirs -> ours)."""
    names = {ours: theirs for theirs, ours in activations.items()}
    fields = {theirs: getattr(encoder, ours) for ours, theirs in BERT_CONFIG_NAMES.items()}
    return {**fields, "hidden_act": names.get(encoder.activation, encoder.activation)}


def read_bert_fields(hf: Mapping[str, Any]) -> dict[str, Any]:
    """The `EncoderConfig` fields of a BERT-style `config.json` (families update a few)."""
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"position_embedding_type {hf['position_embedding_type']!r} is not supported; only 'absolute'")
    fields = read_bert_config_names(hf, HF_BERT_DEFAULTS, HF_ACTIVATIONS, "Hugging Face ")
    return {**fields, "layer_norm_epsilon": hf.get("layer_norm_eps", 1e-12), "pad_id": hf.get("pad_token_id") or 0}


def write_bert_fields(encoder: EncoderConfig) -> dict[str, Any]:
    """A BERT-style `config.json` mapping of `encoder` (without `model_type`), unchecked."""
    return {**write_bert_config_names(encoder, {}), "layer_norm_eps": encoder.layer_norm_epsilon,
            "pad_token_id": encoder.pad_id}


def write_plain_config(model_type: str):
    """`write_config` of a family with neither layer sharing nor factorized embeddings in HF (BERT, RoBERTa)."""
    def write(encoder: EncoderConfig) -> dict[str, Any]:
        if encoder.sharing != "none" or encoder.embedding_size != encoder.hidden_size:
            raise ValueError(f"Hugging Face {model_type} has neither layer sharing nor factorized embeddings")
        return write_bert_fields(encoder)
    return write


def read_bert_config(hf: Mapping[str, Any]) -> dict[str, Any]:
    return dict(**read_bert_fields(hf))


# Hugging Face `BertModel`'s names (also RoBERTa's, XLM-R's and SpanBERT's; ELECTRA's add a projection).
HUGGINGFACE_NAMES = weights.EncoderNames(
    weights.PYTORCH,
    weights.EmbeddingNames("embeddings.word_embeddings.weight", "embeddings.LayerNorm",
                           position="embeddings.position_embeddings.weight",
                           segment="embeddings.token_type_embeddings.weight"),
    weights.BlockNames.bert("encoder.layer.{layer}."),
    pooler="pooler.dense",
)


# `BertForMaskedLM`'s head (`cls.predictions`, the decoder being the tied token table).
MASKED_LM_NAMES = weights.HeadNames("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                                    "cls.predictions.bias")
# `BertForPreTraining`'s heads: the masked LM and the NSP classifier (`cls.seq_relationship`).
HEAD_NAMES = dataclasses.replace(MASKED_LM_NAMES, pair="cls.seq_relationship")


def pooler_classifier_weights(prefix: str, encoder_weights=HUGGINGFACE_NAMES):
    """`classifier_weights` of a family whose sequence classifier is one dense `classifier` on the pooler
    (BERT, ALBERT); `encoder_weights` names the encoder's weights under `prefix`."""
    def assignments(encoder, head, pooling: str) -> Iterator[Assignment]:
        if pooling != "pooler":
            raise ValueError(f"Hugging Face's {prefix} sequence classifier reads the pooler; this model's head reads "
                             f"{pooling!r} pooling")
        yield from encoder_weights(encoder, f"{prefix}.")
        yield from weights.dense(head, "classifier")
    return assignments


def bert_layout(model_type: str, prefix: str, read_config=read_bert_config, head_weights=HEAD_NAMES,
                **options: Any) -> HuggingFaceFormat:
    """A Hugging Face format with BERT's encoder layout, neither sharing nor factorized embeddings
    (BERT, RoBERTa, XLM-R, SpanBERT); `options` are `HuggingFaceFormat`'s other fields.

    Example:
        >>> from tfbert.config import load_config
        >>> bert_layout("mybert", "bert").write_config(load_config("bert_tiny").encoder)["num_hidden_layers"]
        2
    """
    return HuggingFaceFormat(model_type=model_type, prefix=prefix, read_config=read_config,
                             write_config=write_plain_config(model_type), encoder_weights=HUGGINGFACE_NAMES,
                             head_weights=head_weights, **options)


HUGGINGFACE = bert_layout("bert", "bert", class_prefix="Bert", pretraining_class="BertForPreTraining",
                          classifier_weights=pooler_classifier_weights("bert"))

# Google's TF1 code: `hidden_act` names, and the tfbert activation each one is. Its BERT and ALBERT
# `gelu` is the tanh approximation (modeling.py's `gelu`); ELECTRA's is exact.
GOOGLE_BERT_ACTIVATIONS = {"gelu": "gelu_new", "relu": "relu", "tanh": "tanh"}
# google-research/bert's `BertConfig` defaults, for fields a bert_config.json leaves out.
GOOGLE_BERT_DEFAULTS = {
    "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 512, "type_vocab_size": 16, "initializer_range": 0.02,
}
# The LayerNorm epsilon of Google's TF1 code (tf.contrib.layers.layer_norm) and of keras-hub's BERT-style backbones.
TF_LAYER_NORM_EPSILON = 1e-12


def read_google_fields(data: Mapping[str, Any], defaults: Mapping[str, Any],
                       activations: Mapping[str, str]) -> dict[str, Any]:
    """The `EncoderConfig` fields of a Google `bert_config.json`-style mapping (BERT, ALBERT, ELECTRA)."""
    return {**read_bert_config_names(data, defaults, activations), "layer_norm_epsilon": TF_LAYER_NORM_EPSILON}


def write_google_fields(encoder: EncoderConfig, activations: Mapping[str, str]) -> dict[str, Any]:
    """A Google `bert_config.json` mapping of `encoder`; `ValueError` for what the TF1 code cannot hold."""
    if encoder.activation not in activations.values():
        raise ValueError(f"Google's TF1 code has no activation equal to tfbert's {encoder.activation!r}")
    if encoder.layer_norm_epsilon != TF_LAYER_NORM_EPSILON or encoder.position_offset or encoder.num_languages:
        raise ValueError("Google's TF1 code has LayerNorm epsilon 1e-12, positions from 0 and no language embeddings")
    return write_bert_config_names(encoder, activations)


def read_google_bert_config(data: Mapping[str, Any]) -> dict[str, Any]:
    return dict(**read_google_fields(data, GOOGLE_BERT_DEFAULTS, GOOGLE_BERT_ACTIVATIONS))


def write_google_bert_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "none" or encoder.embedding_size != encoder.hidden_size or not encoder.pooler:
        raise ValueError("Google's BERT has neither layer sharing nor factorized embeddings, and has a pooler")
    return write_google_fields(encoder, GOOGLE_BERT_ACTIVATIONS)


# `modeling.BertModel`'s names under `bert/` (Google's BERT; ALBERT's and ELECTRA's embeddings and pooler too).
TF1_NAMES = weights.EncoderNames(
    weights.TENSORFLOW,
    weights.EmbeddingNames("embeddings/word_embeddings", "embeddings/LayerNorm",
                           position="embeddings/position_embeddings", segment="embeddings/token_type_embeddings"),
    weights.BlockNames.bert("encoder/layer_{layer}/", "/"),
    pooler="pooler/dense",
)


# `run_pretraining.py`'s `cls/predictions` (tied masked LM) and `cls/seq_relationship` (NSP, or ALBERT's SOP).
TF1_HEAD_NAMES = weights.HeadNames("cls/predictions/transform/dense", "cls/predictions/transform/LayerNorm",
                                   "cls/predictions/output_bias", pair="cls/seq_relationship",
                                   layout=weights.TENSORFLOW, pair_layout=weights.TENSORFLOW_OUTPUT)


TF1 = TF1Format(
    marker="bert/encoder/layer_0/attention/self/query/kernel",
    prefix="bert/",
    config_file="bert_config.json",
    read_config=read_google_bert_config,
    write_config=write_google_bert_config,
    encoder_weights=TF1_NAMES,
    head_weights=TF1_HEAD_NAMES,
)


def keras_hub_block_names(base: str) -> weights.BlockNames:
    """The variable paths of one keras-hub `TransformerEncoder` named `base` (`transformer_layer_{layer}`)."""
    attention = f"{base}/self_attention_layer"
    return weights.BlockNames(f"{attention}/query", f"{attention}/key", f"{attention}/value",
                              f"{attention}/attention_output", f"{base}/self_attention_layer_norm",
                              f"{base}/feedforward_intermediate_dense", f"{base}/feedforward_output_dense",
                              f"{base}/feedforward_layer_norm")


# keras-hub `BertBackbone`'s variable paths (ALBERT's and ELECTRA's backbones share the embeddings and pooler).
KERAS_HUB_NAMES = weights.EncoderNames(
    weights.KERAS_HUB,
    weights.EmbeddingNames("token_embedding/embeddings", "embeddings_layer_norm",
                           position="position_embedding/embeddings", segment="segment_embedding/embeddings"),
    keras_hub_block_names("transformer_layer_{layer}"),
    pooler="pooled_dense",
)


def read_keras_hub_fields(backbone: Mapping[str, Any], vocabulary_key: str = "vocabulary_size",
                          dropout: float = 0.1) -> dict[str, Any]:
    """The `EncoderConfig` fields of a keras-hub BERT-style backbone's arguments: one dropout rate, the tanh
    GELU and LayerNorm epsilon 1e-12 (BERT's, ALBERT's and ELECTRA's backbones; RoBERTa's replaces a few)."""
    return dict(
        vocab_size=backbone[vocabulary_key],
        hidden_size=backbone["hidden_dim"],
        num_layers=backbone["num_layers"],
        num_heads=backbone["num_heads"],
        intermediate_size=backbone["intermediate_dim"],
        activation="gelu_new",
        dropout_rate=backbone.get("dropout", dropout),
        attention_dropout_rate=backbone.get("dropout", dropout),
        max_positions=backbone.get("max_sequence_length", 512),
        type_vocab_size=backbone.get("num_segments", 2),
        layer_norm_epsilon=TF_LAYER_NORM_EPSILON,
    )


def read_keras_hub_bert_config(backbone: Mapping[str, Any]) -> dict[str, Any]:
    return dict(**read_keras_hub_fields(backbone))


def write_keras_hub_fields(encoder: EncoderConfig, backbone_class: str, activation: str = "gelu_new",
                           epsilon: float = TF_LAYER_NORM_EPSILON,
                           vocabulary_key: str = "vocabulary_size") -> dict[str, Any]:
    """The arguments of keras-hub's `backbone_class` that every BERT-style backbone has; `ValueError` unless
    `encoder` has that backbone's `activation`, LayerNorm `epsilon` and one dropout rate."""
    if encoder.activation != activation or encoder.layer_norm_epsilon != epsilon or encoder.num_languages:
        raise ValueError(f"keras-hub {backbone_class} has activation {activation!r}, LayerNorm epsilon {epsilon} "
                         "and no language embeddings")
    if encoder.dropout_rate != encoder.attention_dropout_rate:
        raise ValueError(f"keras-hub {backbone_class} has one dropout rate for attention and hidden layers")
    return {vocabulary_key: encoder.vocab_size, "num_layers": encoder.num_layers, "num_heads": encoder.num_heads,
            "hidden_dim": encoder.hidden_size, "intermediate_dim": encoder.intermediate_size,
            "dropout": encoder.dropout_rate, "max_sequence_length": encoder.max_positions,
            "num_segments": encoder.type_vocab_size}


def write_keras_hub_bert_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "none" or encoder.embedding_size != encoder.hidden_size or not encoder.pooler:
        raise ValueError("keras-hub BertBackbone has neither layer sharing nor factorized embeddings, and has a pooler")
    return write_keras_hub_fields(encoder, "BertBackbone")


KERAS_HUB = KerasHubFormat(
    backbone_class="BertBackbone",
    read_config=read_keras_hub_bert_config,
    write_config=write_keras_hub_bert_config,
    encoder_weights=KERAS_HUB_NAMES,
)
