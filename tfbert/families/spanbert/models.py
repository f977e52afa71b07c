"""SpanBERT: masked spans predicted by the MLM head and by the span boundary objective (SBO).

For a masked token at position `i` of a span `(s, e)`, the SBO head sees only
the span's boundary tokens and the token's place in the span:

    h0 = [x_{s-1}; x_{e+1}; p_{i-s+1}]
    h1 = LayerNorm(GELU(W1 h0))
    y  = LayerNorm(GELU(W2 h1))

and decodes `y` with the tied token embeddings plus its own bias. Inputs are
single segments (no NSP); the loss is MLM + SBO.
"""

from __future__ import annotations

from typing import Any, Mapping

import keras
from keras import ops

from tfbert.config import ModelConfig, as_model_config
from tfbert.models.activations import get_activation
from tfbert.models.dense import Dense
from tfbert.models.embeddings import TokenEmbedding
from tfbert.models.encoder import Encoder
from tfbert.models.family import FamilyPretrainingModel
from tfbert.models.heads import MaskedLMHead, TiedDecoder
from tfbert.models.initializers import truncated_normal
from tfbert.models.objectives import Terms, WeightedObjectives, sparse_cross_entropy
from tfbert.models.positions import gather_positions

# Rows of the relative-position table: offsets 1..10 for SpanBERT's longest
# spans (10 words) with room for words of several pieces; larger offsets are clipped.
SPAN_POSITIONS = 32


class SpanBoundaryHead(TiedDecoder):
    """SpanBERT's span boundary objective head; float32 logits `[batch, predictions, vocab]`.

    `left` (s - 1), `right` (e + 1) and `offsets` (i - s + 1, from 1) are
    `[batch, predictions]` int32, one per prediction slot.

    Example:
        >>> import numpy as np
        >>> head = SpanBoundaryHead(TokenEmbedding(30522, 128), hidden_size=128)   # the encoder's token table
        >>> left, right, offsets = np.array([[0, 0]]), np.array([[3, 3]]), np.array([[1, 2]])   # span 1..2
        >>> tuple(head(np.zeros((1, 6, 128), "float32"), left, right, offsets).shape)
        (1, 2, 30522)
    """

    def __init__(
        self,
        token_embedding: TokenEmbedding,
        hidden_size: int,
        span_positions: int = SPAN_POSITIONS,
        activation: str = "gelu",
        layer_norm_epsilon: float = 1e-12,
        initializer_range: float = 0.02,
        **kwargs,
    ):
        super().__init__(token_embedding, **kwargs)
        self.hidden_size = hidden_size
        self.span_positions = span_positions
        self.activation_fn = get_activation(activation)
        init = truncated_normal(initializer_range)
        policy = self.dtype_policy
        self.position_embedding = keras.layers.Embedding(
            span_positions, hidden_size, embeddings_initializer=init, dtype=policy, name="position_embedding"
        )
        self.first = Dense(hidden_size, kernel_initializer=init, dtype=policy, name="first")
        self.first_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="first_norm")
        self.second = Dense(token_embedding.output_dim, kernel_initializer=init, dtype=policy, name="second")
        self.second_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="second_norm")

    def build(self, sequence_shape, *positions_shapes):
        width = sequence_shape[-1]
        self.position_embedding.build((None, None))
        self.first.build((None, None, 2 * width + self.hidden_size))
        self.first_norm.build((None, None, self.hidden_size))
        self.second.build((None, None, self.hidden_size))
        self.second_norm.build((None, None, self.token_embedding.output_dim))
        self.build_output_bias()

    def call(self, sequence, left, right, offsets):
        offsets = ops.clip(ops.cast(offsets, "int32"), 0, self.span_positions - 1)
        boundary = ops.concatenate(
            [gather_positions(sequence, left), gather_positions(sequence, right), self.position_embedding(offsets)],
            axis=-1,
        )
        hidden = self.first_norm(self.activation_fn(self.first(boundary)))
        return self.decode(self.second_norm(self.activation_fn(self.second(hidden))))

    def compute_output_shape(self, sequence_shape, left_shape, *shapes):
        return (*left_shape, self.token_embedding.input_dim)


@keras.saving.register_keras_serializable(package="tfbert")
class SpanBertPretrainingModel(FamilyPretrainingModel, WeightedObjectives, keras.Model):
    """SpanBERT pretraining: MLM + SBO on one encoder, trained by `model.fit`.

    Inputs: the encoder's inputs (one segment: `segment_ids` all 0),
    `masked_positions` and, per prediction slot, `span_left_positions` (s - 1),
    `span_right_positions` (e + 1) and `span_offsets` (i - s + 1), all
    `[batch, predictions]` int32 as `tfbert.data.masking.MaskedLMMasker(unit="span")`
    makes them. Labels: `masked_ids`, `masked_weights`. Outputs: `mlm_logits`
    and `sbo_logits` `[batch, predictions, vocab]`, float32. Metrics:
    `mlm_loss`, `mlm_accuracy`, `sbo_loss`, `sbo_accuracy`.

    Example:
        >>> model = SpanBertPretrainingModel(load_config("spanbert_base"))   # a base-size model  # doctest: +SKIP
        >>> model.compile(optimizer="adamw")  # doctest: +SKIP
        >>> model.fit(dataset)  # doctest: +SKIP
    """

    config_arguments = ("span_positions",)
    objective_sets = (("mlm", "sbo"),)

    def __init__(self, config: ModelConfig | Mapping[str, Any], span_positions: int = SPAN_POSITIONS, **kwargs):
        config = as_model_config(config)
        spec = config.spec
        self.check_family(spec, ("mlm", "sbo"))
        policy = kwargs.pop("dtype", None)
        encoder_config = config.encoder
        encoder = Encoder(encoder_config, dtype=policy, name="encoder", architecture=config.architecture)
        inputs = dict(encoder.input)
        for name in ("masked_positions",) + spec.examples.extra_inputs:
            inputs[name] = keras.Input(shape=(None,), dtype="int32", name=name)
        # The encoder's last layer runs only at the masked positions and the span boundaries: the
        # heads read nothing else. Rows [0, P) of `selected` are the masked positions, [P, 2P) the
        # left boundaries and [2P, 3P) the right ones.
        masked, left, right = inputs["masked_positions"], inputs["span_left_positions"], inputs["span_right_positions"]
        selected = encoder.encode_at_positions(
            {name: inputs[name] for name in encoder.input}, ops.concatenate([masked, left, right], axis=1)
        )["sequence_output"]
        slot = ops.cumsum(ops.ones_like(masked), axis=1) - 1
        count = ops.sum(ops.ones_like(masked), axis=1, keepdims=True)

        mlm_head = MaskedLMHead.for_encoder(encoder.token_embedding, encoder_config, dtype=policy, name="mlm_head")
        sbo_head = SpanBoundaryHead(
            encoder.token_embedding,
            encoder_config.hidden_size,
            span_positions=span_positions,
            layer_norm_epsilon=encoder_config.layer_norm_epsilon,
            initializer_range=encoder_config.initializer_range,
            dtype=policy,
            name="sbo_head",
        )
        outputs = {
            "mlm_logits": mlm_head(selected, slot),
            "sbo_logits": sbo_head(selected, slot + count, slot + 2 * count, inputs["span_offsets"]),
        }
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        if encoder_config.pooler:
            # Neither objective reads the pooler; freezing it keeps it out of the optimizer.
            encoder.get_layer("pooler").trainable = False
        self.config = config
        self.span_positions = span_positions
        self.encoder = encoder
        self.record_dtype_policy(policy)
        self.track_objectives(("mlm", "sbo"))

    def objective_terms(self, x, y, y_pred) -> dict[str, Terms]:
        """Float32 `(loss, hit, weight)` of both objectives over the weighted prediction slots."""
        weights = ops.cast(y["masked_weights"], "float32")
        return {
            objective: (*sparse_cross_entropy(y["masked_ids"], y_pred[f"{objective}_logits"]), weights)
            for objective in ("mlm", "sbo")
        }


def build_spanbert_pretraining_model(config: ModelConfig, objectives: tuple[str, ...], seed: int | None,
                                     dtype: str | None) -> SpanBertPretrainingModel:
    """SpanBERT's factory (`ArchitectureSpec.pretraining_model`): MLM + SBO."""
    return SpanBertPretrainingModel(config, dtype=dtype)
