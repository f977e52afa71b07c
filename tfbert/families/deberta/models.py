"""DeBERTa-v3 pretraining: ELECTRA-style replaced-token detection with gradient-disentangled embedding sharing.

ELECTRA's generator and discriminator share one token table, so the discriminator's loss pulls
the generator's embeddings one way and the generator's MLM loss another ("tug of war"). GDES
(He et al. 2021, https://arxiv.org/abs/2111.09543, section 3) lets the discriminator read
`stop_gradient(E_generator) + E_delta`: the generator's table is trained by MLM alone, the
zero-initialised delta by RTD alone. Everything else (sampling, labels, losses, metrics) is
`ElectraPretrainingModel`'s.
"""

from __future__ import annotations

import keras
from keras import ops

from tfbert.config import ModelConfig
from tfbert.families.electra.models import ElectraPretrainingModel
from tfbert.models.embeddings import TokenEmbedding
from tfbert.models.encoder import Encoder, text_embeddings
from tfbert.models.pretraining import PretrainingModel


class DisentangledTokenEmbedding(TokenEmbedding):
    """A token table read as `stop_gradient(shared) + delta`; `delta` (this layer's weight) starts at zero.

    Example:
        >>> token_ids = ops.array([[5, 7, 9]])
        >>> generator_table = TokenEmbedding(1000, 32)          # the generator's token_embedding
        >>> generator_vectors = generator_table(token_ids)
        >>> table = DisentangledTokenEmbedding(generator_table)
        >>> vectors = table(token_ids)   # gradients reach the delta only
        >>> bool(ops.all(vectors == generator_vectors))          # the delta starts at zero
        True
    """

    def __init__(self, shared: TokenEmbedding, **kwargs):
        super().__init__(shared.input_dim, shared.output_dim, embeddings_initializer="zeros", **kwargs)
        # Held through a function, not as an attribute: Keras would track the generator's table as this
        # layer's too, and save it twice.
        self.shared_table = lambda: shared.embeddings

    def table(self):
        """The table the discriminator reads: the generator's (no gradient) plus the delta."""
        return ops.stop_gradient(ops.convert_to_tensor(self.shared_table())) + ops.convert_to_tensor(self.embeddings)

    def call(self, inputs, reverse: bool = False):
        table = ops.cast(self.table(), self.compute_dtype)
        if reverse:
            return ops.matmul(ops.cast(inputs, self.compute_dtype), ops.transpose(table))
        return ops.take(table, ops.cast(inputs, "int32"), axis=0)


@keras.saving.register_keras_serializable(package="tfbert")
class DebertaRTDModel(ElectraPretrainingModel):
    """DeBERTa-v3's pretraining model: a generator (MLM) and a discriminator (RTD) with GDES.

    Inputs, labels, outputs, loss (`MLM + rtd_weight * RTD`) and metrics are
    `ElectraPretrainingModel`'s. The generator owns the token table; the discriminator has its
    own embedding LayerNorm and reads the table through `DisentangledTokenEmbedding`.
    `save_encoder` writes the discriminator as a plain `Encoder` whose table is the sum (`encoder_to_save`).

    Example:
        >>> model = DebertaRTDModel(load_config("deberta_v3_xsmall"), seed=0)   # 128k-piece tables: ~70M parameters  # doctest: +SKIP
        >>> model.compile(optimizer="adamw")  # doctest: +SKIP
        >>> model.fit(dataset)   # traces a train step: ~10 s of CPU per family, tests/conformance trains each  # doctest: +SKIP
        >>> model.save_encoder("deberta/")   # deberta/encoder.keras, for fine-tuning and export  # doctest: +SKIP
    """

    generator_embeddings = "disentangled"

    @staticmethod
    def build_encoders(config: ModelConfig, policy) -> tuple[Encoder, Encoder]:
        generator = Encoder(config.generator, dtype=policy, name="generator")
        token_embedding = DisentangledTokenEmbedding(generator.token_embedding, dtype=policy, name="token_embedding")
        embeddings = text_embeddings(config.encoder, policy, token_embedding=token_embedding)
        discriminator = Encoder(config.encoder, embeddings=embeddings, dtype=policy, name="discriminator",
                                architecture=config.architecture)
        return discriminator, generator

    def encoder_to_save(self) -> Encoder:
        """The discriminator as a stand-alone `Encoder` (token table = generator's + delta), for fine-tuning."""
        encoder = Encoder(self.config.encoder, dtype=self._policy_name, name="encoder",
                          architecture=self.config.architecture)
        encoder.set_weights(self.discriminator.get_weights())
        encoder.token_embedding.embeddings.assign(
            ops.convert_to_numpy(self.discriminator.token_embedding.table()))
        return encoder


def build_deberta_pretraining_model(config: ModelConfig, objectives: tuple[str, ...], seed: int | None,
                                    dtype: str | None) -> keras.Model:
    """DeBERTa's factory (`ArchitectureSpec.pretraining_model`): RTD with gradient-disentangled embedding
    sharing when `rtd` is asked for, else a masked LM."""
    if "rtd" in objectives:
        return DebertaRTDModel(config, seed=seed, dtype=dtype)
    return PretrainingModel(config, objectives=objectives, dtype=dtype)
