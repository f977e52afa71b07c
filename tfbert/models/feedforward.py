"""The position-wise feed-forward sub-layer with BERT's post-LayerNorm residual."""

from __future__ import annotations

import keras

from tfbert.models.activations import get_activation
from tfbert.models.dropout import Dropout
from tfbert.models.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="tfbert")
class FeedForward(keras.layers.Layer):
    """`LayerNorm(x + Dropout(Dense(activation(Dense(x)))))`.

    Example:
        >>> ffn = FeedForward(hidden_size=768, intermediate_size=3072, activation="gelu")
        >>> outputs = ffn(hidden_states)
    """

    def __init__(
        self,
        hidden_size: int,
        intermediate_size: int,
        activation: str = "gelu",
        dropout_rate: float = 0.1,
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
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
        init = truncated_normal(initializer_range)
        policy = self.dtype_policy
        self.intermediate = keras.layers.Dense(
            intermediate_size, kernel_initializer=init, dtype=policy, name="intermediate"
        )
        self.output_dense = keras.layers.Dense(hidden_size, kernel_initializer=init, dtype=policy, name="output")
        self.dropout = Dropout(dropout_rate, dtype=policy, name="dropout")
        self.layer_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="layer_norm")

    def build(self, inputs_shape):
        self.intermediate.build(inputs_shape)
        self.output_dense.build((*inputs_shape[:-1], self.intermediate_size))
        self.layer_norm.build(inputs_shape)

    def call(self, inputs, training=None):
        expanded = self.activation_fn(self.intermediate(inputs))
        return self.layer_norm(inputs + self.dropout(self.output_dense(expanded), training=training))

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
        )
        return config
