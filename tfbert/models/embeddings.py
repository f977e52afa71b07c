"""Input embeddings: tokens, positions, segments and languages, summed and normalised."""

from __future__ import annotations

import keras
from keras import ops

from tfbert.models.dense import matmul_rows
from tfbert.models.dropout import Dropout
from tfbert.models.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="tfbert")
class TokenEmbedding(keras.layers.Embedding):
    """A token embedding table that also decodes: `reverse=True` maps vectors to vocabulary logits.

    Tied output heads (masked LM, ELECTRA's generator) call the same layer in
    reverse, so the decoder is the transposed embedding table.

    Example:
        >>> table = TokenEmbedding(30522, 768)
        >>> token_ids = ops.array([[101, 7592, 102]])
        >>> vectors = table(token_ids)                # [batch, length, 768]
        >>> logits = table(vectors, reverse=True)     # [batch, length, 30522]
        >>> tuple(vectors.shape), tuple(logits.shape)
        ((1, 3, 768), (1, 3, 30522))
    """

    def call(self, inputs, reverse: bool = False):
        if reverse:
            table = ops.cast(self.embeddings, self.compute_dtype)
            return matmul_rows(ops.cast(inputs, self.compute_dtype), ops.transpose(table))
        return super().call(inputs)

    def compute_output_shape(self, input_shape, reverse: bool = False):
        if reverse:
            return (*input_shape[:-1], self.input_dim)
        return super().compute_output_shape(input_shape)

    def compute_output_spec(self, inputs, reverse: bool = False):
        if reverse:
            return keras.KerasTensor((*inputs.shape[:-1], self.input_dim), dtype=self.compute_dtype)
        return super().compute_output_spec(inputs)


@keras.saving.register_keras_serializable(package="tfbert")
class TextEmbeddings(keras.layers.Layer):
    """Sum of token, position, segment and language embeddings, then LayerNorm and dropout.

    With `position_offset > 0` (RoBERTa), real tokens take positions
    `position_offset, position_offset + 1, ...` and padding takes
    `position_offset - 1`, the padding row, as in fairseq; otherwise positions are
    `0 .. length - 1`. Explicit `position_ids` (XLM's TLM, whose positions
    restart at the second sentence) replace the computed positions. Segment
    embeddings exist when `type_vocab_size > 0` and language embeddings when
    `num_languages > 0` (XLM). `absolute_positions=False` leaves out the position
    table (rotary and relative positions enter in the attention instead).
    `token_embedding` replaces the layer's own token table by a given one (DeBERTa's
    discriminator reads the generator's through a `DisentangledTokenEmbedding`); it is not
    part of `get_config`, so the model that passes it rebuilds it.

    Example:
        >>> embeddings = TextEmbeddings(vocab_size=30522, embedding_size=768)
        >>> token_ids = ops.array([[101, 7592, 102]])
        >>> vectors = embeddings(token_ids, ops.zeros_like(token_ids), ops.ones_like(token_ids))
        >>> tuple(vectors.shape)
        (1, 3, 768)
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_size: int,
        max_positions: int = 512,
        type_vocab_size: int = 2,
        num_languages: int = 0,
        position_offset: int = 0,
        layer_norm_epsilon: float = 1e-12,
        dropout_rate: float = 0.1,
        initializer_range: float = 0.02,
        absolute_positions: bool = True,
        token_embedding: TokenEmbedding | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.absolute_positions = absolute_positions
        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.max_positions = max_positions
        self.type_vocab_size = type_vocab_size
        self.num_languages = num_languages
        self.position_offset = position_offset
        self.layer_norm_epsilon = layer_norm_epsilon
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        init = truncated_normal(initializer_range)
        policy = self.dtype_policy
        self.token_embedding = token_embedding if token_embedding is not None else TokenEmbedding(
            vocab_size, embedding_size, embeddings_initializer=init, dtype=policy, name="token_embedding"
        )
        self.position_embedding = (
            keras.layers.Embedding(
                max_positions, embedding_size, embeddings_initializer=init, dtype=policy, name="position_embedding"
            )
            if absolute_positions
            else None
        )
        self.segment_embedding = (
            keras.layers.Embedding(
                type_vocab_size, embedding_size, embeddings_initializer=init, dtype=policy, name="segment_embedding"
            )
            if type_vocab_size
            else None
        )
        self.language_embedding = (
            keras.layers.Embedding(
                num_languages, embedding_size, embeddings_initializer=init, dtype=policy, name="language_embedding"
            )
            if num_languages
            else None
        )
        self.layer_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="layer_norm")
        self.dropout = Dropout(dropout_rate, dtype=policy, name="dropout")

    def build(self, token_ids_shape, *args, **kwargs):
        self.token_embedding.build(token_ids_shape)
        if self.position_embedding is not None:
            self.position_embedding.build(token_ids_shape)
        if self.segment_embedding is not None:
            self.segment_embedding.build(token_ids_shape)
        if self.language_embedding is not None:
            self.language_embedding.build(token_ids_shape)
        self.layer_norm.build((*token_ids_shape, self.embedding_size))

    def positions(self, token_ids, padding_mask):
        length = ops.shape(token_ids)[1]
        if not self.position_offset:
            return ops.expand_dims(ops.arange(length, dtype="int32"), 0)
        mask = ops.cast(padding_mask, "int32")
        counted = ops.cumsum(mask, axis=1) - 1 + self.position_offset
        return counted * mask + (self.position_offset - 1) * (1 - mask)

    def call(self, token_ids, segment_ids=None, padding_mask=None, language_ids=None, position_ids=None, training=None):
        vectors = self.token_embedding(token_ids)
        if self.position_embedding is not None:
            if position_ids is None:
                position_ids = self.positions(token_ids, padding_mask)
            vectors = vectors + self.position_embedding(position_ids)
        if self.segment_embedding is not None:
            vectors = vectors + self.segment_embedding(segment_ids)
        if self.language_embedding is not None:
            vectors = vectors + self.language_embedding(language_ids)
        return self.dropout(self.layer_norm(vectors), training=training)

    def compute_output_shape(self, token_ids_shape, *args, **kwargs):
        return (*token_ids_shape, self.embedding_size)

    def get_config(self):
        config = super().get_config()
        config.update(
            vocab_size=self.vocab_size,
            embedding_size=self.embedding_size,
            max_positions=self.max_positions,
            type_vocab_size=self.type_vocab_size,
            num_languages=self.num_languages,
            position_offset=self.position_offset,
            layer_norm_epsilon=self.layer_norm_epsilon,
            dropout_rate=self.dropout_rate,
            initializer_range=self.initializer_range,
            absolute_positions=self.absolute_positions,
        )
        return config
