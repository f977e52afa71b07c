"""ELECTRA: a small masked-LM generator corrupts the input, a discriminator detects replaced tokens.

The generator and the discriminator are two `Encoder`s built from the
`ModelConfig`'s `generator` and `encoder` configs; they share one embedding
layer (token, position and segment tables and its LayerNorm), as in the
paper. The generator predicts the masked tokens; a token is sampled from its
distribution at every masked position (Gumbel-max, seeded, no gradient); the
discriminator reads the corrupted sequence and predicts, for every real token,
whether it was replaced. The loss is `MLM + rtd_weight * RTD` (50 in the paper).
"""

from __future__ import annotations

from typing import Any, Mapping

import keras
from keras import ops

from tfbert.config import ModelConfig, as_model_config
from tfbert.models.activations import get_activation
from tfbert.models.dense import Dense
from tfbert.models.encoder import Encoder
from tfbert.models.family import FamilyPretrainingModel
from tfbert.models.heads import MaskedLMHead
from tfbert.models.initializers import truncated_normal
from tfbert.models.objectives import RatioMetric, Terms, WeightedObjectives, global_sum, sparse_cross_entropy


def replace_at_positions(token_ids, positions, replacements):
    """`token_ids` with `replacements[b, p]` written at `positions[b, p]`, except at position 0.

    Position 0 is never written: unused prediction slots point at it (with
    weight 0), and it holds `[CLS]`, which is never masked; the reference
    implementation skips it the same way. Works under XLA (a one-hot, no scatter).
    """
    length = ops.shape(token_ids)[1]
    positions = ops.cast(positions, "int32")
    hits = ops.one_hot(positions, length, dtype="int32") * ops.cast(positions > 0, "int32")[:, :, None]
    written = ops.max(hits, axis=1)
    values = ops.max(hits * ops.cast(replacements, "int32")[:, :, None], axis=1)
    return ops.where(written > 0, values, ops.cast(token_ids, "int32"))


def replaced_token_labels(token_ids, masked_positions, masked_ids, masked_weights, corrupted_ids):
    """1.0 where the discriminator's input differs from the original sequence, else 0.0.

    The original sequence is the masked input with `masked_ids` put back at the
    prediction slots that have weight; a sampled token equal to the original
    is therefore labelled 0, as in the paper.
    """
    used = ops.cast(ops.cast(masked_weights, "float32") > 0, "int32")
    original = replace_at_positions(token_ids, ops.cast(masked_positions, "int32") * used, masked_ids)
    return ops.cast(ops.not_equal(ops.cast(corrupted_ids, "int32"), original), "float32")


class GumbelSampler(keras.layers.Layer):
    """Draws one token per prediction slot from `softmax(logits)` by the Gumbel-max trick.

    The sample carries no gradient. A fixed `seed` makes the sequence of
    samples repeat from model to model; the generator's position in that
    sequence is saved with the model, so a reloaded model draws what the
    original would have drawn next.

    Example:
        >>> import numpy as np
        >>> logits = np.log(np.array([[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]], "float32") + 1e-9)
        >>> keras.ops.convert_to_numpy(GumbelSampler(seed=1)(logits)).tolist()   # [batch, predictions] int32
        [[1, 2]]
    """

    def __init__(self, seed: int | None = None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed, name="seed_generator")

    def call(self, logits):
        logits = ops.stop_gradient(ops.cast(logits, "float32"))
        uniform = keras.random.uniform(ops.shape(logits), minval=1e-9, maxval=1.0, seed=self.seed_generator)
        gumbel = -ops.log(-ops.log(uniform))
        return ops.cast(ops.argmax(logits + gumbel, axis=-1), "int32")

    def compute_output_shape(self, logits_shape):
        return logits_shape[:-1]

    def compute_output_spec(self, logits):
        return keras.KerasTensor(logits.shape[:-1], dtype="int32")

    def save_own_variables(self, store):
        store["seed_state"] = keras.ops.convert_to_numpy(self.seed_generator.state.value)

    def load_own_variables(self, store):
        self.seed_generator.state.assign(store["seed_state"])


class ReplaceTokens(keras.layers.Layer):
    """The generator's samples written into the masked input (see `replace_at_positions`)."""

    def call(self, token_ids, positions, replacements):
        return replace_at_positions(token_ids, positions, replacements)

    def compute_output_spec(self, token_ids, positions, replacements):
        return keras.KerasTensor(token_ids.shape, dtype="int32")


class ReplacedTokenHead(keras.layers.Layer):
    """The discriminator's head: `Dense(hidden, activation) -> Dense(1)`, one float32 logit per token.

    Example:
        >>> import numpy as np
        >>> logits = ReplacedTokenHead(256, "gelu")(np.zeros((2, 7, 256), "float32"))
        >>> tuple(logits.shape)   # [batch, length]
        (2, 7)
    """

    def __init__(self, hidden_size: int, activation: str = "gelu", initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        init = truncated_normal(initializer_range)
        self.dense = Dense(
            hidden_size, activation=get_activation(activation), kernel_initializer=init, dtype=self.dtype_policy,
            name="dense",
        )
        self.prediction = Dense(1, kernel_initializer=init, dtype=self.dtype_policy, name="prediction")

    def build(self, sequence_shape):
        self.dense.build(sequence_shape)
        self.prediction.build((*sequence_shape[:-1], self.dense.units))

    def call(self, sequence):
        return ops.cast(ops.squeeze(self.prediction(self.dense(sequence)), axis=-1), "float32")

    def compute_output_shape(self, sequence_shape):
        return sequence_shape[:-1]


@keras.saving.register_keras_serializable(package="tfbert")
class ElectraPretrainingModel(FamilyPretrainingModel, WeightedObjectives, keras.Model):
    """ELECTRA's generator and discriminator, trained together by `model.fit`.

    Inputs: the encoder's inputs (`token_ids` already masked, `segment_ids`,
    `padding_mask`, ...) plus `masked_positions` `[batch, predictions]`.
    Labels (`y`): `masked_ids` and `masked_weights` `[batch, predictions]`.
    Outputs: `mlm_logits` `[batch, predictions, vocab]` (generator),
    `sampled_ids` `[batch, predictions]`, `corrupted_ids` `[batch, length]`
    (the discriminator's input) and `rtd_logits` `[batch, length]`.

    Loss: generator MLM over weighted slots plus `rtd_weight` times the
    discriminator's sigmoid cross-entropy over every real token (label 1
    where the corrupted token differs from the original). Metrics:
    `mlm_loss`, `mlm_accuracy`, `rtd_loss`, `rtd_accuracy`, `rtd_precision`
    and `rtd_recall` (of the replaced class).

    Example:
        >>> from tfbert.config import load_config
        >>> model = ElectraPretrainingModel(load_config("electra_small"), seed=0)
        >>> model.compile(optimizer="adamw")
        >>> model.fit(dataset)   # (inputs, labels) dicts; traces a train step: ~10 s of CPU, tests/conformance trains each family  # doctest: +SKIP
        >>> model.save_encoder("electra/")        # the discriminator, for fine-tuning and export
        'electra/encoder.keras'
    """

    config_arguments = ("rtd_weight", "seed")
    objective_sets = (("mlm", "rtd"),)
    generator_embeddings = "shared"

    def __init__(
        self,
        config: ModelConfig | Mapping[str, Any],
        rtd_weight: float = 50.0,
        seed: int | None = None,
        **kwargs,
    ):
        config = as_model_config(config)
        self.check_family(config.spec, ("mlm", "rtd"))
        if config.generator is None:
            raise ValueError(
                "ElectraPretrainingModel needs config.generator; tfbert.config.scaled_generator(config.encoder, 0.25) "
                "makes the paper's"
            )
        policy = kwargs.pop("dtype", None)
        discriminator, generator = self.build_encoders(config, policy)
        inputs = dict(discriminator.input)
        inputs["masked_positions"] = keras.Input(shape=(None,), dtype="int32", name="masked_positions")
        encoder_inputs = {name: inputs[name] for name in discriminator.input}

        # The generator's last layer runs only at the masked positions: its head reads nothing else.
        generated = generator.encode_at_positions(encoder_inputs, inputs["masked_positions"])
        # ELECTRA's generator head uses GELU whatever the encoder's activation (Google's and Hugging Face's).
        generator_head = MaskedLMHead.for_encoder(
            generator.token_embedding, config.generator, activation="gelu", dtype=policy, name="generator_head"
        )
        mlm_logits = generator_head(generated["sequence_output"])
        sampled = GumbelSampler(seed, name="sampler")(mlm_logits)
        corrupted = ReplaceTokens(name="replace_tokens")(inputs["token_ids"], inputs["masked_positions"], sampled)
        discriminated = discriminator({**encoder_inputs, "token_ids": corrupted})
        rtd_logits = ReplacedTokenHead(
            config.encoder.hidden_size,
            activation=config.encoder.activation,
            initializer_range=config.encoder.initializer_range,
            dtype=policy,
            name="discriminator_head",
        )(discriminated["sequence_output"])

        super().__init__(
            inputs=inputs,
            outputs={"mlm_logits": mlm_logits, "sampled_ids": sampled, "corrupted_ids": corrupted, "rtd_logits": rtd_logits},
            **kwargs,
        )
        self.config = config
        self.rtd_weight = float(rtd_weight)
        self.seed = seed
        self.discriminator = discriminator
        self.generator = generator
        self.record_dtype_policy(policy)
        self.track_objectives(("mlm", "rtd"), loss_weights={"rtd": rtd_weight})
        self._ratios = {name: RatioMetric(name=name) for name in ("rtd_precision", "rtd_recall")}

    @staticmethod
    def build_encoders(config: ModelConfig, policy) -> tuple[Encoder, Encoder]:
        """The discriminator and the generator; ELECTRA's generator uses the discriminator's embedding layer."""
        discriminator = Encoder(config.encoder, dtype=policy, name="discriminator", architecture=config.architecture)
        generator = Encoder(
            config.generator, embeddings=discriminator.get_layer("embeddings"), dtype=policy, name="generator"
        )
        return discriminator, generator

    @property
    def encoder(self) -> Encoder:
        """The discriminator: the encoder ELECTRA fine-tunes and exports (see `save_encoder`)."""
        return self.discriminator

    def replaced_labels(self, x, y, y_pred):
        """1.0 where the corrupted input differs from the original token, else 0.0."""
        return replaced_token_labels(x["token_ids"], x["masked_positions"], y["masked_ids"],
                                     ops.cast(y["masked_weights"], "float32"), y_pred["corrupted_ids"])

    def objective_terms(self, x, y, y_pred) -> dict[str, Terms]:
        """Generator MLM over the masked slots; discriminator RTD (sigmoid) over every real token."""
        labels = self.replaced_labels(x, y, y_pred)
        logits = ops.cast(y_pred["rtd_logits"], "float32")
        rtd_hits = ops.cast(ops.equal(ops.cast(logits > 0, "float32"), labels), "float32")
        return {
            "mlm": (*sparse_cross_entropy(y["masked_ids"], y_pred["mlm_logits"]),
                    ops.cast(y["masked_weights"], "float32")),
            "rtd": (ops.binary_crossentropy(labels, logits, from_logits=True), rtd_hits,
                    ops.cast(x["padding_mask"], "float32")),
        }

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """The objectives' metrics plus the discriminator's precision and recall on replaced tokens."""
        labels = self.replaced_labels(x, y, y_pred)
        real = ops.cast(x["padding_mask"], "float32")
        predicted = ops.cast(ops.cast(y_pred["rtd_logits"], "float32") > 0, "float32") * real

        def count(values):
            return global_sum(ops.sum(ops.stop_gradient(values)), self.replica_sum)

        true_replaced = count(predicted * labels)
        self._ratios["rtd_precision"].update_state(true_replaced, count(predicted))
        self._ratios["rtd_recall"].update_state(true_replaced, count(labels * real))
        return super().compute_metrics(x, y, y_pred, sample_weight)


def build_electra_pretraining_model(config: ModelConfig, objectives: tuple[str, ...], seed: int | None,
                                    dtype: str | None) -> ElectraPretrainingModel:
    """ELECTRA's factory (`ArchitectureSpec.pretraining_model`): the generator's MLM and the discriminator's RTD."""
    return ElectraPretrainingModel(config, seed=seed, dtype=dtype)
