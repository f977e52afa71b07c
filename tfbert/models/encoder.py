"""The one encoder builder: every tfbert architecture's transformer comes from here."""

from __future__ import annotations

from typing import Any, Mapping

import keras
from keras import ops

from tfbert.config import EncoderConfig
from tfbert.models.attention import SelfAttention, attention_bias
from tfbert.models.dense import Dense
from tfbert.models.embeddings import TextEmbeddings, TokenEmbedding
from tfbert.models.feedforward import FeedForward
from tfbert.models.initializers import truncated_normal
from tfbert.models.relative import RelativePositions

INPUT_NAMES = ("token_ids", "segment_ids", "padding_mask")


def _component_name(config: EncoderConfig, kind: str, layer: int, inner: int) -> str:
    """Layer name of the attention or FFN sub-layer that transformer layer `layer` uses.

    Shared sub-layers are named after their group, so two layers that share one
    get the same name, and the same object.
    """
    shared = config.sharing == "all" or config.sharing == kind
    if not shared:
        return f"layer{layer}_{kind}" if config.inner_group_num == 1 else f"layer{layer}_inner{inner}_{kind}"
    return f"group{config.group_of_layer(layer)}_inner{inner}_{kind}"


def _run_layers(config, stem, block, inputs, causal, last_layer_positions=None) -> list:
    """Embeds `inputs` and runs every transformer layer; returns each layer's output.

    `stem` maps `embeddings`, `projection`, `relative` and `final_norm` to the encoder's layers
    outside the blocks (None where the config has none); `block(layer, inner)` gives the
    attention and feed-forward sub-layers to use. With `last_layer_positions`, the last layer's
    output is computed at those positions only.
    """
    hidden = stem["embeddings"](
        inputs["token_ids"],
        inputs["segment_ids"] if config.type_vocab_size else None,
        inputs["padding_mask"],
        inputs.get("language_ids"),
        inputs.get("position_ids"),
    )
    if stem["projection"] is not None:
        hidden = stem["projection"](hidden)
    bias = attention_bias(inputs["padding_mask"], causal=causal)
    relative = {}
    if stem["relative"] is not None:
        relative["relative_table"], relative["relative_index"] = stem["relative"](hidden)
    layer_outputs = []
    for layer in range(config.num_layers):
        for inner in range(config.inner_group_num):
            attention, feed_forward = block(layer, inner)
            last_block = layer == config.num_layers - 1 and inner == config.inner_group_num - 1
            if last_layer_positions is not None and last_block:
                hidden = attention(hidden, bias, query_positions=last_layer_positions, **relative)
            else:
                hidden = attention(hidden, bias, **relative)
            hidden = feed_forward(hidden)
        layer_outputs.append(hidden)
    if stem["final_norm"] is not None:
        layer_outputs[-1] = stem["final_norm"](layer_outputs[-1])
    return layer_outputs


def text_embeddings(config: EncoderConfig, policy=None, token_embedding: TokenEmbedding | None = None) -> TextEmbeddings:
    """The embedding layer `config` describes (`token_embedding`: use this token table instead of a new one)."""
    return TextEmbeddings(
        vocab_size=config.vocab_size,
        embedding_size=config.embedding_size,
        max_positions=config.max_positions,
        type_vocab_size=config.type_vocab_size,
        num_languages=config.num_languages,
        position_offset=config.position_offset,
        layer_norm_epsilon=config.layer_norm_epsilon,
        dropout_rate=config.dropout_rate,
        initializer_range=config.initializer_range,
        absolute_positions=config.positions == "absolute",
        token_embedding=token_embedding,
        dtype=policy,
        name="embeddings",
    )


def _stem(config: EncoderConfig, embeddings: TextEmbeddings | None, policy) -> dict[str, Any]:
    """The encoder's layers outside the transformer blocks, as `_run_layers` reads them."""
    init = truncated_normal(config.initializer_range)
    if embeddings is None:
        embeddings = text_embeddings(config, policy)
    stem = {"embeddings": embeddings, "projection": None, "relative": None, "final_norm": None}
    if config.embedding_size != config.hidden_size:
        stem["projection"] = Dense(
            config.hidden_size, kernel_initializer=init, dtype=policy, name="embedding_projection"
        )
    if config.positions == "relative":
        stem["relative"] = RelativePositions(
            config.hidden_size, config.relative_span, config.max_relative_distance, config.position_buckets,
            layer_norm_epsilon=config.layer_norm_epsilon, initializer_range=config.initializer_range,
            dtype=policy, name="relative_positions",
        )
    if config.norm_first:
        stem["final_norm"] = keras.layers.LayerNormalization(
            epsilon=config.layer_norm_epsilon, dtype=policy, name="final_layer_norm"
        )
    return stem


def _sub_layer(config: EncoderConfig, kind: str, name: str, policy) -> keras.layers.Layer:
    """A new attention (`kind` `attention`) or feed-forward (`ffn`) sub-layer as `config` describes it."""
    common = dict(
        dropout_rate=config.dropout_rate,
        layer_norm_epsilon=config.layer_norm_epsilon,
        initializer_range=config.initializer_range,
        norm_first=config.norm_first,
        dtype=policy,
        name=name,
    )
    if kind == "attention":
        return SelfAttention(
            config.hidden_size,
            config.num_heads,
            attention_dropout_rate=config.attention_dropout_rate,
            positions=config.positions,
            rotary_base=config.rotary_base,
            share_attention_key=config.share_attention_key,
            **common,
        )
    return FeedForward(
        config.hidden_size,
        config.intermediate_size,
        activation=config.activation,
        gated=config.feed_forward == "gated",
        **common,
    )


@keras.saving.register_keras_serializable(package="tfbert")
class Encoder(keras.Model):
    """A transformer encoder built from an `EncoderConfig` (post-LN BERT blocks by default).

    Inputs are a dict of int32 tensors `[batch, length]`: `token_ids`,
    `segment_ids`, `padding_mask` (1 for real tokens), `language_ids` when the
    config has languages and `position_ids` when `config.position_ids_input`.
    Outputs are a dict: `sequence_output` `[batch, length, hidden]`,
    `pooled_output` (tanh dense on the first token, or the first token itself
    when `config.pooler` is false) and `encoder_outputs`, the output of every
    transformer layer.

    `architecture` is the family (`bert`, `roberta`, ...) where known; it is saved with the
    encoder, so a `.keras` file says what it holds (`tfbert.artifacts.open`).

    `embeddings` lets two encoders share one `TextEmbeddings` layer (ELECTRA's
    generator uses its discriminator's); its hyper-parameters must be the ones
    `config` describes.

    The sharing strategy decides which blocks reuse weights; shared sub-layers
    are the same Keras layer object, so they are the same variables. The block
    options (`norm_first`, `feed_forward`, `positions`) are the config's; a pre-LN
    encoder ends with `final_layer_norm`, a relative one holds `relative_positions`.

    Example:
        >>> import numpy as np
        >>> from tfbert.config import load_config
        >>> encoder = build_encoder(load_config("bert_tiny").encoder)
        >>> ids = np.array([[101, 7592, 2088, 102]])
        >>> outputs = encoder({"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": ids > 0})
        >>> tuple(outputs["sequence_output"].shape), tuple(outputs["pooled_output"].shape)
        ((1, 4, 128), (1, 128))
    """

    def __init__(
        self,
        config: EncoderConfig | Mapping[str, Any],
        causal: bool = False,
        embeddings: TextEmbeddings | None = None,
        architecture: str | None = None,
        **kwargs,
    ):
        config = config if isinstance(config, EncoderConfig) else EncoderConfig.from_dict(config)
        policy = kwargs.pop("dtype", None)
        init = truncated_normal(config.initializer_range)
        names = INPUT_NAMES + (("language_ids",) if config.num_languages else ())
        names += ("position_ids",) if config.position_ids_input else ()
        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in names}

        stem = _stem(config, embeddings, policy)
        components: dict[str, keras.layers.Layer] = {}

        def block(layer: int, inner: int) -> tuple[keras.layers.Layer, keras.layers.Layer]:
            pair = []
            for kind in ("attention", "ffn"):
                name = _component_name(config, kind, layer, inner)
                if name not in components:
                    components[name] = _sub_layer(config, kind, name, policy)
                pair.append(components[name])
            return pair[0], pair[1]

        layer_outputs = _run_layers(config, stem, block, inputs, causal)
        hidden = layer_outputs[-1]
        pooled = hidden[:, 0, :]
        if config.pooler:
            pooled = keras.layers.Dense(
                config.hidden_size, activation="tanh", kernel_initializer=init, dtype=policy, name="pooler"
            )(pooled)

        super().__init__(
            inputs=inputs,
            outputs={"sequence_output": hidden, "pooled_output": pooled, "encoder_outputs": layer_outputs},
            **kwargs,
        )
        self.config = config
        self.causal = causal
        self.architecture = architecture
        self._policy_name = policy if policy is None or isinstance(policy, str) else policy.name
        self.token_embedding: TokenEmbedding = stem["embeddings"].token_embedding

    def block(self, layer: int, inner: int = 0) -> tuple[SelfAttention, FeedForward]:
        """The attention and feed-forward sub-layers of transformer layer `layer`."""
        return (
            self.get_layer(_component_name(self.config, "attention", layer, inner)),
            self.get_layer(_component_name(self.config, "ffn", layer, inner)),
        )

    def stem(self) -> dict[str, Any]:
        """The layers outside the blocks: `embeddings`, `projection`, `relative`, `final_norm` (None: absent)."""
        names = {"embeddings": "embeddings", "projection": "embedding_projection", "relative": "relative_positions",
                 "final_norm": "final_layer_norm"}
        present = {layer.name for layer in self.layers}
        return {key: self.get_layer(name) if name in present else None for key, name in names.items()}

    def encode_at_positions(self, inputs: Mapping[str, Any], positions) -> dict[str, Any]:
        """The last layer's output only at `positions` `[batch, count]`, and the pooled output.

        The same numbers as `self(inputs)["sequence_output"]` gathered at `positions`, but the last
        transformer layer attends from, and runs its feed-forward on, those positions and the first
        one only: a pretraining head that reads a few positions (MLM, NSP/SOP) skips most of the last
        layer's work. Returns `sequence_output` `[batch, count, hidden]` and `pooled_output`.

        Example:
            >>> import numpy as np
            >>> from tfbert.config import load_config
            >>> encoder = build_encoder(load_config("bert_tiny").encoder)
            >>> ids = np.array([[101, 103, 2088, 103, 102]])
            >>> inputs = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": ids > 0}
            >>> outputs = encoder.encode_at_positions(inputs, np.array([[1, 3]]))
            >>> tuple(outputs["sequence_output"].shape)   # (batch, predictions, hidden)
            (1, 2, 128)
            >>> full = encoder(inputs)["sequence_output"].numpy()[:, [1, 3]]
            >>> bool(np.allclose(outputs["sequence_output"], full, atol=1e-5))
            True
        """
        if self.causal:
            raise ValueError("encode_at_positions needs a bidirectional encoder; this one is causal")
        with_first = ops.concatenate([ops.zeros_like(positions[:, :1]), positions], axis=1)
        selected = _run_layers(self.config, self.stem(), self.block, inputs, False, with_first)[-1]
        pooled = selected[:, 0, :]
        if self.config.pooler:
            pooled = self.get_layer("pooler")(pooled)
        return {"sequence_output": selected[:, 1:, :], "pooled_output": pooled}

    def get_config(self) -> dict[str, Any]:
        return {
            "config": self.config.to_dict(),
            "causal": self.causal,
            "name": self.name,
            "trainable": self.trainable,
            "dtype": self._policy_name,
            **({"architecture": self.architecture} if self.architecture else {}),
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "Encoder":
        return cls(**config)


def build_encoder(config: EncoderConfig, *, causal: bool = False, dtype: str | None = None, name: str = "encoder",
                  architecture: str | None = None) -> Encoder:
    """Builds the encoder that `config` describes (BERT, ALBERT, RoBERTa, XLM, ...).

    `causal=True` masks attention to earlier positions (XLM's CLM). `dtype` is
    a Keras dtype policy such as `"mixed_bfloat16"`; the global policy by default.
    """
    return Encoder(config, causal=causal, dtype=dtype, name=name, architecture=architecture)

