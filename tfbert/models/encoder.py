"""The one encoder builder: every tfbert architecture's transformer comes from here."""

from __future__ import annotations

from typing import Any, Mapping

import keras
from keras import ops

from tfbert.config import EncoderConfig
from tfbert.models.attention import SelfAttention, attention_bias
from tfbert.models.embeddings import TextEmbeddings, TokenEmbedding
from tfbert.models.feedforward import FeedForward
from tfbert.models.initializers import truncated_normal

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


def _run_layers(config, embeddings, projection, block, inputs, causal, last_layer_positions=None) -> list:
    """Embeds `inputs` and runs every transformer layer; returns each layer's output.

    `block(layer, inner)` gives the attention and feed-forward sub-layers to use. With
    `last_layer_positions`, the last layer's output is computed at those positions only.
    """
    hidden = embeddings(
        inputs["token_ids"],
        inputs["segment_ids"] if config.type_vocab_size else None,
        inputs["padding_mask"],
        inputs.get("language_ids"),
        inputs.get("position_ids"),
    )
    if projection is not None:
        hidden = projection(hidden)
    bias = attention_bias(inputs["padding_mask"], causal=causal)
    layer_outputs = []
    for layer in range(config.num_layers):
        for inner in range(config.inner_group_num):
            attention, feed_forward = block(layer, inner)
            last_block = layer == config.num_layers - 1 and inner == config.inner_group_num - 1
            if last_layer_positions is not None and last_block:
                hidden = attention(hidden, bias, query_positions=last_layer_positions)
            else:
                hidden = attention(hidden, bias)
            hidden = feed_forward(hidden)
        layer_outputs.append(hidden)
    return layer_outputs


@keras.saving.register_keras_serializable(package="tfbert")
class Encoder(keras.Model):
    """A post-LayerNorm transformer encoder built from an `EncoderConfig`.

    Inputs are a dict of int32 tensors `[batch, length]`: `token_ids`,
    `segment_ids`, `padding_mask` (1 for real tokens), `language_ids` when the
    config has languages and `position_ids` when `config.position_ids_input`.
    Outputs are a dict: `sequence_output` `[batch, length, hidden]`,
    `pooled_output` (tanh dense on the first token, or the first token itself
    when `config.pooler` is false) and `encoder_outputs`, the output of every
    transformer layer.

    `embeddings` lets two encoders share one `TextEmbeddings` layer (ELECTRA's
    generator uses its discriminator's); its hyper-parameters must be the ones
    `config` describes.

    The sharing strategy decides which blocks reuse weights; shared sub-layers
    are the same Keras layer object, so they are the same variables.

    Example:
        >>> encoder = build_encoder(load_config("bert_base").encoder)
        >>> outputs = encoder({"token_ids": ids, "segment_ids": segments, "padding_mask": mask})
        >>> outputs["sequence_output"].shape
        (batch, length, 768)
    """

    def __init__(
        self,
        config: EncoderConfig | Mapping[str, Any],
        causal: bool = False,
        embeddings: TextEmbeddings | None = None,
        **kwargs,
    ):
        config = config if isinstance(config, EncoderConfig) else EncoderConfig.from_dict(config)
        policy = kwargs.pop("dtype", None)
        init = truncated_normal(config.initializer_range)
        names = INPUT_NAMES + (("language_ids",) if config.num_languages else ())
        names += ("position_ids",) if config.position_ids_input else ()
        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in names}

        if embeddings is None:
            embeddings = TextEmbeddings(
                vocab_size=config.vocab_size,
                embedding_size=config.embedding_size,
                max_positions=config.max_positions,
                type_vocab_size=config.type_vocab_size,
                num_languages=config.num_languages,
                position_offset=config.position_offset,
                layer_norm_epsilon=config.layer_norm_epsilon,
                dropout_rate=config.dropout_rate,
                initializer_range=config.initializer_range,
                dtype=policy,
                name="embeddings",
            )
        projection = None
        if config.embedding_size != config.hidden_size:
            projection = keras.layers.Dense(
                config.hidden_size, kernel_initializer=init, dtype=policy, name="embedding_projection"
            )
        components: dict[str, keras.layers.Layer] = {}

        def component(kind: str, layer: int, inner: int) -> keras.layers.Layer:
            name = _component_name(config, kind, layer, inner)
            if name not in components:
                if kind == "attention":
                    components[name] = SelfAttention(
                        config.hidden_size,
                        config.num_heads,
                        dropout_rate=config.dropout_rate,
                        attention_dropout_rate=config.attention_dropout_rate,
                        layer_norm_epsilon=config.layer_norm_epsilon,
                        initializer_range=config.initializer_range,
                        dtype=policy,
                        name=name,
                    )
                else:
                    components[name] = FeedForward(
                        config.hidden_size,
                        config.intermediate_size,
                        activation=config.activation,
                        dropout_rate=config.dropout_rate,
                        layer_norm_epsilon=config.layer_norm_epsilon,
                        initializer_range=config.initializer_range,
                        dtype=policy,
                        name=name,
                    )
            return components[name]

        def block(layer: int, inner: int) -> tuple[keras.layers.Layer, keras.layers.Layer]:
            return component("attention", layer, inner), component("ffn", layer, inner)

        layer_outputs = _run_layers(config, embeddings, projection, block, inputs, causal)
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
        self._policy_name = policy if policy is None or isinstance(policy, str) else policy.name
        self.token_embedding: TokenEmbedding = embeddings.token_embedding

    def block(self, layer: int, inner: int = 0) -> tuple[SelfAttention, FeedForward]:
        """The attention and feed-forward sub-layers of transformer layer `layer`."""
        return (
            self.get_layer(_component_name(self.config, "attention", layer, inner)),
            self.get_layer(_component_name(self.config, "ffn", layer, inner)),
        )

    def encode_at_positions(self, inputs: Mapping[str, Any], positions) -> dict[str, Any]:
        """The last layer's output only at `positions` `[batch, count]`, and the pooled output.

        The same numbers as `self(inputs)["sequence_output"]` gathered at `positions`, but the last
        transformer layer attends from, and runs its feed-forward on, those positions and the first
        one only: a pretraining head that reads a few positions (MLM, NSP/SOP) skips most of the last
        layer's work. Returns `sequence_output` `[batch, count, hidden]` and `pooled_output`.

        Example:
            >>> outputs = encoder.encode_at_positions(inputs, masked_positions)
            >>> outputs["sequence_output"].shape   # (batch, predictions, hidden)
        """
        if self.causal:
            raise ValueError("encode_at_positions needs a bidirectional encoder; this one is causal")
        with_first = ops.concatenate([ops.zeros_like(positions[:, :1]), positions], axis=1)
        projection = self.get_layer("embedding_projection") if self.config.embedding_size != self.config.hidden_size else None
        selected = _run_layers(
            self.config, self.get_layer("embeddings"), projection, self.block, inputs, False, with_first
        )[-1]
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
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "Encoder":
        return cls(**config)


def build_encoder(config: EncoderConfig, *, causal: bool = False, dtype: str | None = None, name: str = "encoder") -> Encoder:
    """Builds the encoder that `config` describes (BERT, ALBERT, RoBERTa, XLM, ...).

    `causal=True` masks attention to earlier positions (XLM's CLM). `dtype` is
    a Keras dtype policy such as `"mixed_bfloat16"`; the global policy by default.
    """
    return Encoder(config, causal=causal, dtype=dtype, name=name)

