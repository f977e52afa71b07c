"""Multi-head self-attention with BERT's post-LayerNorm residual."""

from __future__ import annotations

import math

import keras
from keras import ops

from tfbert.models.dropout import Dropout
from tfbert.models.initializers import truncated_normal
from tfbert.models.positions import gather_positions

# Added to the scores of masked keys. Finite, so a row with every key masked
# gives a uniform distribution instead of NaN.
MASKED_SCORE = -1e9


def attention_bias(padding_mask, causal: bool = False):
    """Additive float32 bias `[batch, 1, query, key]` (or `[batch, 1, 1, key]`) from a `[batch, key]` mask."""
    keep = ops.cast(padding_mask, "float32")[:, None, None, :]
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

    Example:
        >>> attention = SelfAttention(hidden_size=768, num_heads=12)
        >>> outputs = attention(hidden_states, attention_bias(padding_mask))
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        dropout_rate: float = 0.1,
        attention_dropout_rate: float = 0.1,
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_size = hidden_size // num_heads
        self.dropout_rate = dropout_rate
        self.attention_dropout_rate = attention_dropout_rate
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        init = truncated_normal(initializer_range)
        policy = self.dtype_policy
        self.query_key_value = keras.layers.Dense(
            3 * hidden_size, kernel_initializer=init, dtype=policy, name="query_key_value"
        )
        self.output_dense = keras.layers.Dense(hidden_size, kernel_initializer=init, dtype=policy, name="output")
        self.attention_dropout = Dropout(attention_dropout_rate, dtype=policy, name="attention_dropout")
        self.output_dropout = Dropout(dropout_rate, dtype=policy, name="output_dropout")
        self.layer_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="layer_norm")

    def build(self, inputs_shape, bias_shape=None, query_positions_shape=None):
        self.query_key_value.build(inputs_shape)
        self.output_dense.build((*inputs_shape[:-1], self.hidden_size))
        self.layer_norm.build(inputs_shape)

    def call(self, inputs, bias, query_positions=None, training=None):
        """`query_positions` `[batch, queries]` (optional) attends from those positions only and returns
        `[batch, queries, hidden]`: every key and value is still used. Pretraining uses it in the
        last layer, whose output is needed only where the heads read it. Needs a `[batch, 1, 1, key]` bias."""
        batch, length = ops.shape(inputs)[0], ops.shape(inputs)[1]
        fused = ops.reshape(self.query_key_value(inputs), (batch, length, 3, self.num_heads, self.head_size))
        query, key, value = fused[:, :, 0], fused[:, :, 1], fused[:, :, 2]
        if query_positions is not None:
            inputs = gather_positions(inputs, query_positions)
            query = ops.reshape(
                gather_positions(ops.reshape(query, (batch, length, self.hidden_size)), query_positions),
                (batch, -1, self.num_heads, self.head_size),
            )
        query = query * ops.cast(1.0 / math.sqrt(self.head_size), query.dtype)
        # Keras casts floating inputs to the compute dtype; the bias is float32 again here.
        scores = ops.cast(ops.einsum("bqnd,bknd->bnqk", query, key), "float32") + ops.cast(bias, "float32")
        probabilities = ops.softmax(scores, axis=-1)
        probabilities = self.attention_dropout(ops.cast(probabilities, self.compute_dtype), training=training)
        context = ops.einsum("bnqk,bknd->bqnd", probabilities, value)
        context = ops.reshape(context, (batch, -1, self.hidden_size))
        attended = self.output_dropout(self.output_dense(context), training=training)
        return self.layer_norm(inputs + attended)

    def compute_output_shape(self, inputs_shape, bias_shape=None, query_positions_shape=None):
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
        )
        return config
