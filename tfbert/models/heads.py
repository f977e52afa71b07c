"""Pretraining heads: the masked-LM head and the two-way sentence-pair (NSP/SOP) head."""

from __future__ import annotations

import keras
from keras import ops

from tfbert.config import EncoderConfig
from tfbert.models.activations import get_activation
from tfbert.models.dense import Dense
from tfbert.models.dropout import Dropout
from tfbert.models.embeddings import TokenEmbedding
from tfbert.models.initializers import truncated_normal
from tfbert.models.positions import gather_positions


class TiedDecoder(keras.layers.Layer):
    """Base of the heads that decode with the transposed token embedding table plus their own output bias.

    Subclasses call `build_output_bias()` in `build` and `decode(hidden)` for float32 logits
    `[..., vocab]` (the bias stays float32 under mixed precision).
    """

    def __init__(self, token_embedding: TokenEmbedding, **kwargs):
        super().__init__(**kwargs)
        self.token_embedding = token_embedding

    def build_output_bias(self) -> None:
        self.output_bias = self.add_weight(
            shape=(self.token_embedding.input_dim,), initializer="zeros", name="output_bias", autocast=False
        )

    def decode(self, hidden):
        """Float32 logits of `hidden` `[..., embedding_size]` over the vocabulary."""
        return ops.cast(self.token_embedding(hidden, reverse=True), "float32") + self.output_bias


class MaskedLMHead(TiedDecoder):
    """Predicts the original tokens at the masked positions only.

    `Dense(embedding_size) -> activation -> LayerNorm`, then the decoder: the
    transposed token embedding table (tied weights) plus an output bias. With
    factorized embeddings (ALBERT) the dense layer projects the hidden size down
    to the embedding size, so the tied table fits. Logits are float32.

    Example:
        >>> head = MaskedLMHead(TokenEmbedding(30522, 128), activation="gelu")    # an encoder's token table
        >>> sequence_output, masked_positions = keras.random.normal((2, 16, 128)), ops.array([[3, 5], [1, 9]])
        >>> logits = head(sequence_output, masked_positions)   # [batch, predictions, vocab]
        >>> tuple(logits.shape)
        (2, 2, 30522)
    """

    def __init__(
        self,
        token_embedding: TokenEmbedding,
        activation: str = "gelu",
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
        **kwargs,
    ):
        super().__init__(token_embedding, **kwargs)
        self.activation_fn = get_activation(activation)
        policy = self.dtype_policy
        self.transform = Dense(
            token_embedding.output_dim,
            kernel_initializer=truncated_normal(initializer_range),
            dtype=policy,
            name="transform",
        )
        self.layer_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="layer_norm")

    @classmethod
    def for_encoder(
        cls, token_embedding: TokenEmbedding, config: EncoderConfig, activation: str | None = None, **kwargs
    ) -> "MaskedLMHead":
        """The head of an encoder made from `config`: its epsilon, initializer and (unless given) activation."""
        return cls(
            token_embedding,
            activation=activation or config.activation,
            layer_norm_epsilon=config.layer_norm_epsilon,
            initializer_range=config.initializer_range,
            **kwargs,
        )

    def build(self, sequence_shape, positions_shape=None):
        self.transform.build(sequence_shape)
        self.layer_norm.build((*sequence_shape[:-1], self.token_embedding.output_dim))
        self.build_output_bias()

    def call(self, sequence, positions=None):
        """Logits at `positions` of `sequence`; without `positions`, `sequence` holds only the masked ones."""
        selected = sequence if positions is None else gather_positions(sequence, positions)
        return self.decode(self.layer_norm(self.activation_fn(self.transform(selected))))

    def compute_output_shape(self, sequence_shape, positions_shape=None):
        return (*(sequence_shape[:-1] if positions_shape is None else positions_shape), self.token_embedding.input_dim)


class SentencePairHead(keras.layers.Layer):
    """Two-way classifier on the pooled output: BERT's next-sentence or ALBERT's sentence-order head.

    Example:
        >>> logits = SentencePairHead()(keras.random.normal((4, 128)))   # pooled output -> [batch, 2], float32
        >>> tuple(logits.shape), keras.backend.standardize_dtype(logits.dtype)
        ((4, 2), 'float32')
    """

    def __init__(self, dropout_rate: float = 0.0, initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        self.dropout = Dropout(dropout_rate, dtype=self.dtype_policy, name="dropout")
        self.classifier = keras.layers.Dense(
            2, kernel_initializer=truncated_normal(initializer_range), dtype=self.dtype_policy, name="classifier"
        )

    def build(self, pooled_shape):
        self.classifier.build(pooled_shape)

    def call(self, pooled, training=None):
        return ops.cast(self.classifier(self.dropout(pooled, training=training)), "float32")

    def compute_output_shape(self, pooled_shape):
        return (pooled_shape[0], 2)
