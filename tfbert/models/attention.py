"""Multi-head self-attention: post- or pre-LayerNorm residual, absolute, rotary or relative positions."""

from __future__ import annotations

import math

import keras
from keras import ops

from tfbert.models.dense import Dense
from tfbert.models.dropout import Dropout
from tfbert.models.initializers import truncated_normal
from tfbert.models.positions import gather_positions
from tfbert.models.relative import disentangled_scores
from tfbert.models.rotary import rotary_angles, rotate

# Added to the scores of masked keys. Finite, so a row with every key masked
# gives a uniform distribution instead of NaN.
MASKED_SCORE = -1e9


def attention_bias(padding_mask, causal: bool = False):
    """Additive float32 bias `[batch, 1, query, key]` (or `[batch, 1, 1, key]`) from a `[batch, key]` mask."""
    # expand_dims rather than [:, None, None, :]: TensorFlow Lite has no builtin for a strided slice that adds
    # axes to a tensor of unknown shape, so an encoder with dynamic shapes would not convert.
    keep = ops.expand_dims(ops.expand_dims(ops.cast(padding_mask, "float32"), 1), 1)
    if causal:
        # Built from the mask rather than ops.ones((length, length)): the length is unknown
        # (None) while a functional model is being built.
        index = ops.cumsum(ops.ones_like(keep[0, 0, 0, :]), axis=0)
        earlier = ops.cast(index[None, :] <= index[:, None], "float32")
        keep = keep * earlier[None, None, :, :]
    return (1.0 - keep) * MASKED_SCORE


@keras.saving.register_keras_serializable(package="tfbert")
class SelfAttention(keras.layers.Layer):
    """Self-attention sub-layer: `LayerNorm(x + Dropout(Dense(Attention(x))))`.

    Queries, keys and values come from one fused `[hidden, 3 * hidden]` projection
    (one matmul instead of three). Scores, the mask and the softmax are computed
    in float32 whatever the layer's precision policy.

    `norm_first=True` gives the pre-LN form `x + Dropout(Dense(Attention(LayerNorm(x))))`.
    `positions="rotary"` rotates queries and keys by position (base `rotary_base`);
    `positions="relative"` adds DeBERTa's content-to-position and position-to-content scores,
    reading the shared relative table and bucket index passed as `relative_table` and
    `relative_index` (`tfbert.models.relative.RelativePositions`); with
    `share_attention_key` the table is projected by the content query and key projections,
    otherwise by its own `position_query` and `position_key`.

    Example:
        >>> attention = SelfAttention(hidden_size=768, num_heads=12)
        >>> hidden_states, padding_mask = keras.random.normal((2, 16, 768)), ops.ones((2, 16), "int32")
        >>> outputs = attention(hidden_states, attention_bias(padding_mask))
        >>> tuple(outputs.shape)
        (2, 16, 768)
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        dropout_rate: float = 0.1,
        attention_dropout_rate: float = 0.1,
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
        norm_first: bool = False,
        positions: str = "absolute",
        rotary_base: float = 10000.0,
        share_attention_key: bool = True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.norm_first = norm_first
        self.positions = positions
        self.rotary_base = rotary_base
        self.share_attention_key = share_attention_key
        self.head_size = hidden_size // num_heads
        self.dropout_rate = dropout_rate
        self.attention_dropout_rate = attention_dropout_rate
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        init = truncated_normal(initializer_range)
        policy = self.dtype_policy
        self.query_key_value = Dense(
            3 * hidden_size, kernel_initializer=init, dtype=policy, name="query_key_value"
        )
        self.output_dense = Dense(hidden_size, kernel_initializer=init, dtype=policy, name="output")
        self.attention_dropout = Dropout(attention_dropout_rate, dtype=policy, name="attention_dropout")
        self.output_dropout = Dropout(dropout_rate, dtype=policy, name="output_dropout")
        self.layer_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="layer_norm")
        separate = positions == "relative" and not share_attention_key
        self.position_query = (
            Dense(hidden_size, kernel_initializer=init, dtype=policy, name="position_query")
            if separate else None
        )
        self.position_key = (
            Dense(hidden_size, kernel_initializer=init, dtype=policy, name="position_key")
            if separate else None
        )
        self.position_dropout = (
            Dropout(dropout_rate, dtype=policy, name="position_dropout") if positions == "relative" else None
        )

    def build(self, inputs_shape, bias_shape=None, query_positions_shape=None, relative_table_shape=None,
              relative_index_shape=None):
        self.query_key_value.build(inputs_shape)
        self.output_dense.build((*inputs_shape[:-1], self.hidden_size))
        self.layer_norm.build(inputs_shape)
        for projection in (self.position_query, self.position_key):
            if projection is not None:
                projection.build((None, self.hidden_size))

    @property
    def score_scale(self) -> float:
        """`1 / sqrt(head_size * terms)`: DeBERTa scales by the three score terms it sums."""
        return 1.0 / math.sqrt(self.head_size * (3 if self.positions == "relative" else 1))

    def call(self, inputs, bias, query_positions=None, relative_table=None, relative_index=None, training=None):
        """`query_positions` `[batch, queries]` (optional) attends from those positions only and returns
        `[batch, queries, hidden]`: every key and value is still used. Pretraining uses it in the
        last layer, whose output is needed only where the heads read it. Needs a `[batch, 1, 1, key]` bias."""
        residual = inputs
        if self.norm_first:
            inputs = self.layer_norm(inputs)
        batch, length = ops.shape(inputs)[0], ops.shape(inputs)[1]
        fused = ops.reshape(self.query_key_value(inputs), (batch, length, 3, self.num_heads, self.head_size))
        query, key, value = fused[:, :, 0], fused[:, :, 1], fused[:, :, 2]
        if self.positions == "rotary":
            cos, sin = rotary_angles(length, self.head_size, self.rotary_base)
            query, key = rotate(query, cos, sin), rotate(key, cos, sin)
        if query_positions is not None:
            residual = gather_positions(residual, query_positions)
            query = ops.reshape(
                gather_positions(ops.reshape(query, (batch, length, self.hidden_size)), query_positions),
                (batch, -1, self.num_heads, self.head_size),
            )
            if relative_index is not None:
                relative_index = ops.take(relative_index[0], ops.cast(query_positions, "int32"), axis=0)
        query = query * ops.cast(self.score_scale, query.dtype)
        # Heads-major batched matmuls: JAX's CPU backend runs their gradients faster than the einsums'.
        scores = ops.matmul(ops.transpose(query, (0, 2, 1, 3)), ops.transpose(key, (0, 2, 3, 1)))
        if self.positions == "relative":
            scores = scores + self.relative_scores(query, key, relative_table, relative_index, training)
        # Keras casts floating inputs to the compute dtype; the bias is float32 again here.
        scores = ops.cast(scores, "float32") + ops.cast(bias, "float32")
        probabilities = ops.softmax(scores, axis=-1)
        probabilities = self.attention_dropout(ops.cast(probabilities, self.compute_dtype), training=training)
        context = ops.transpose(ops.matmul(probabilities, ops.transpose(value, (0, 2, 1, 3))), (0, 2, 1, 3))
        context = ops.reshape(context, (batch, -1, self.hidden_size))
        attended = self.output_dropout(self.output_dense(context), training=training)
        if self.norm_first:
            return residual + attended
        return self.layer_norm(residual + attended)

    def relative_scores(self, query, key, table, index, training=None):
        """DeBERTa's content-to-position and position-to-content scores for the (scaled) `query` and `key`."""
        table = self.position_dropout(ops.cast(table, self.compute_dtype), training=training)
        if self.position_query is None:
            fused = self.query_key_value(table)
            position_query, position_key = fused[:, : self.hidden_size], fused[:, self.hidden_size : 2 * self.hidden_size]
        else:
            position_query, position_key = self.position_query(table), self.position_key(table)
        heads = (-1, self.num_heads, self.head_size)
        position_query = ops.reshape(position_query, heads) * ops.cast(self.score_scale, table.dtype)
        return disentangled_scores(query, key, position_query, ops.reshape(position_key, heads), index)

    def compute_output_shape(self, inputs_shape, bias_shape=None, query_positions_shape=None,
                             relative_table_shape=None, relative_index_shape=None):
        if query_positions_shape is not None:
            return (inputs_shape[0], query_positions_shape[1], inputs_shape[2])
        return inputs_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            hidden_size=self.hidden_size,
            num_heads=self.num_heads,
            dropout_rate=self.dropout_rate,
            attention_dropout_rate=self.attention_dropout_rate,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
            norm_first=self.norm_first,
            positions=self.positions,
            rotary_base=self.rotary_base,
            share_attention_key=self.share_attention_key,
        )
        return config
