"""XLM-RoBERTa: RoBERTa's encoder and masked-LM head with a 250,002-piece SentencePiece vocabulary."""

from __future__ import annotations

import keras

from tfbert.config import ModelConfig
from tfbert.models.pretraining import PretrainingModel


@keras.saving.register_keras_serializable(package="tfbert")
class XLMRobertaPretrainingModel(PretrainingModel):
    """XLM-R masked-LM pretraining: RoBERTa's model for an `xlmr` config.

    Inputs, labels, outputs and metrics are `PretrainingModel`'s for RoBERTa
    (MLM only); the class exists so that a saved model says what it is, and
    it accepts `xlmr` configs only (`tfbert.architectures`).

    Example:
        >>> model = XLMRobertaPretrainingModel(load_config("xlmr_base"))   # 280M parameters  # doctest: +SKIP
        >>> model.compile(optimizer="adamw")  # doctest: +SKIP
        >>> model.fit(dataset)  # doctest: +SKIP
    """


def build_xlmr_pretraining_model(config: ModelConfig, objectives: tuple[str, ...], seed: int | None,
                                 dtype: str | None) -> XLMRobertaPretrainingModel:
    """XLM-R's factory (`ArchitectureSpec.pretraining_model`): RoBERTa's masked LM as `XLMRobertaPretrainingModel`."""
    return XLMRobertaPretrainingModel(config, objectives=objectives, dtype=dtype)
