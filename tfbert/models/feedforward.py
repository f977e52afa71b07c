"""The position-wise feed-forward sub-layer: dense or gated (GLU), post- or pre-LayerNorm residual."""

from __future__ import annotations

import keras

from tfbert.models.activations import get_activation
from tfbert.models.dense import Dense
from tfbert.models.dropout import Dropout
from tfbert.models.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="tfbert")
class FeedForward(keras.layers.Layer):
    """`LayerNorm(x + Dropout(Dense(activation(Dense(x)))))` (BERT's post-LN, the default).

    `gated=True` makes the inner part a gated linear unit, `activation(gate(x)) * intermediate(x)`
    (GLU variants, Shazeer 2020); `norm_first=True` normalises the input instead of the sum:
    `x + Dropout(Dense(...(LayerNorm(x))))` (pre-LN).

    Example:
        >>> ffn = FeedForward(hidden_size=768, intermediate_size=3072, activation="gelu")
        >>> outputs = ffn(keras.random.normal((2, 16, 768)))
        >>> tuple(outputs.shape)
        (2, 16, 768)
        >>> glu = FeedForward(hidden_size=768, intermediate_size=2048, activation="silu", gated=True, norm_first=True)
    """

    def __init__(
        self,
        hidden_size: int,
        intermediate_size: int,
        activation: str = "gelu",
        dropout_rate: float = 0.1,
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
        gated: bool = False,
        norm_first: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.activation = activation
        self.activation_fn = get_activation(activation)
        self.dropout_rate = dropout_rate
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.gated = gated
        self.norm_first = norm_first
        init = truncated_normal(initializer_range)
        policy = self.dtype_policy
        self.intermediate = Dense(
            intermediate_size, kernel_initializer=init, dtype=policy, name="intermediate"
        )
        self.gate = (
            Dense(intermediate_size, kernel_initializer=init, dtype=policy, name="gate") if gated else None
        )
        self.output_dense = Dense(hidden_size, kernel_initializer=init, dtype=policy, name="output")
        self.dropout = Dropout(dropout_rate, dtype=policy, name="dropout")
        self.layer_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="layer_norm")

    def build(self, inputs_shape):
        self.intermediate.build(inputs_shape)
        if self.gate is not None:
            self.gate.build(inputs_shape)
        self.output_dense.build((*inputs_shape[:-1], self.intermediate_size))
        self.layer_norm.build(inputs_shape)

    def expand(self, inputs):
        """The inner `[..., intermediate]` activations: `activation(Dense(x))`, or the GLU's gated product."""
        if self.gate is None:
            return self.activation_fn(self.intermediate(inputs))
        return self.activation_fn(self.gate(inputs)) * self.intermediate(inputs)

    def call(self, inputs, training=None):
        if self.norm_first:
            return inputs + self.dropout(self.output_dense(self.expand(self.layer_norm(inputs))), training=training)
        return self.layer_norm(inputs + self.dropout(self.output_dense(self.expand(inputs)), training=training))

    def compute_output_shape(self, inputs_shape):
        return inputs_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            hidden_size=self.hidden_size,
            intermediate_size=self.intermediate_size,
            activation=self.activation,
            dropout_rate=self.dropout_rate,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
            gated=self.gated,
            norm_first=self.norm_first,
        )
        return config
