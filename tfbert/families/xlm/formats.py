"""XLM's Hugging Face format: its own `config.json` names (`emb_dim`, `n_langs`) and weight names.

Example:
    >>> HUGGINGFACE.class_name("ForQuestionAnswering")
    'XLMForQuestionAnsweringSimple'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping

from tfbert.architectures.spec import Assignment, HuggingFaceFormat
from tfbert.convert import weights

if TYPE_CHECKING:
    from tfbert.config import EncoderConfig


def read_xlm_config(hf: Mapping[str, Any]) -> dict[str, Any]:
    """XLM's `config.json` names its fields differently (`emb_dim`, `n_layers`, `n_langs`, ...)."""
    if hf.get("asm", False):
        raise ValueError("XLM checkpoints with an adaptive softmax (asm: true) are not supported")
    if not hf.get("is_encoder", True):
        raise ValueError("XLM decoders (is_encoder: false) are not supported")
    languages = hf.get("n_langs", 1)
    width = hf.get("emb_dim", 2048)
    return dict(
        vocab_size=hf.get("vocab_size", hf.get("n_words", 30145)),
        hidden_size=width,
        num_layers=hf.get("n_layers", 12),
        num_heads=hf.get("n_heads", 16),
        intermediate_size=4 * width,
        activation="gelu" if hf.get("gelu_activation", True) else "relu",
        dropout_rate=hf.get("dropout", 0.1),
        attention_dropout_rate=hf.get("attention_dropout", 0.1),
        max_positions=hf.get("max_position_embeddings", 512),
        type_vocab_size=0,
        num_languages=languages if languages > 1 and hf.get("use_lang_emb", True) else 0,
        layer_norm_epsilon=hf.get("layer_norm_eps", 1e-12),
        initializer_range=hf.get("init_std", 0.02),
        pad_id=hf.get("pad_index", 2),
        pooler=False,
    )


def write_xlm_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.intermediate_size != 4 * encoder.hidden_size or encoder.type_vocab_size or encoder.pooler:
        raise ValueError("Hugging Face XLM has intermediate_size = 4 * hidden_size, no segment embeddings and no pooler")
    if encoder.activation not in ("gelu", "relu"):
        raise ValueError(f"Hugging Face XLM has gelu or relu, not {encoder.activation!r}")
    return dict(
        vocab_size=encoder.vocab_size,
        emb_dim=encoder.hidden_size,
        n_layers=encoder.num_layers,
        n_heads=encoder.num_heads,
        gelu_activation=encoder.activation == "gelu",
        dropout=encoder.dropout_rate,
        attention_dropout=encoder.attention_dropout_rate,
        max_position_embeddings=encoder.max_positions,
        n_langs=max(encoder.num_languages, 1),
        use_lang_emb=encoder.num_languages > 1,
        layer_norm_eps=encoder.layer_norm_epsilon,
        init_std=encoder.initializer_range,
        pad_index=encoder.pad_id,
        pad_token_id=encoder.pad_id,
    )


# `XLMModel`: `embeddings`, `position_embeddings`, `lang_embeddings`, `layer_norm_emb`, then per layer
# `attentions.{i}.{q,k,v,out}_lin`, `layer_norm1.{i}`, `ffns.{i}.lin{1,2}`, `layer_norm2.{i}`; no pooler.
HUGGINGFACE_NAMES = weights.EncoderNames(
    weights.PYTORCH,
    weights.EmbeddingNames("embeddings.weight", "layer_norm_emb", position="position_embeddings.weight",
                           language="lang_embeddings.weight"),
    weights.BlockNames("attentions.{layer}.q_lin", "attentions.{layer}.k_lin", "attentions.{layer}.v_lin",
                       "attentions.{layer}.out_lin", "layer_norm1.{layer}", "ffns.{layer}.lin1", "ffns.{layer}.lin2",
                       "layer_norm2.{layer}"),
)


def xlm_head_weights(model) -> Iterator[Assignment]:
    """`XLMWithLMHeadModel`'s `pred_layer.proj` bias (its weight is the tied token table)."""
    yield from weights.tensor(model.get_layer("lm_head").output_bias, "pred_layer.proj.bias")


HUGGINGFACE = HuggingFaceFormat(
    model_type="xlm",
    prefix="transformer",
    read_config=read_xlm_config,
    write_config=write_xlm_config,
    encoder_weights=HUGGINGFACE_NAMES,
    head_weights=xlm_head_weights,
    head_objectives=lambda hf: ("clm",) if hf.get("causal") else ("mlm",),
    head_config=lambda model: {"causal": model.objective == "clm"},
    class_names={"ForQuestionAnswering": "XLMForQuestionAnsweringSimple"},
    token_embedding="embeddings.weight",
    ignored_suffixes=("pred_layer.proj.weight",),
    class_prefix="XLM",
    pretraining_class="XLMWithLMHeadModel",
)
