"""XLM-RoBERTa: RoBERTa's encoder and masked-LM head with a 250,002-piece SentencePiece vocabulary."""

from __future__ import annotations

from typing import Any, Mapping

import keras

from tfbert.config import ModelConfig
from tfbert.models.pretraining import PretrainingModel


@keras.saving.register_keras_serializable(package="tfbert")
class XLMRobertaPretrainingModel(PretrainingModel):
    """XLM-R masked-LM pretraining: RoBERTa's model for an `xlmr` config.

    Inputs, labels, outputs and metrics are `PretrainingModel`'s for RoBERTa
    (MLM only); `config` keeps architecture `xlmr`.

    Example:
        >>> model = XLMRobertaPretrainingModel(load_config("xlmr_base"))
        >>> model.compile(optimizer="adamw")
        >>> model.fit(dataset)
    """

    def __init__(self, config: ModelConfig | Mapping[str, Any], **kwargs):
        config = config if isinstance(config, ModelConfig) else ModelConfig.from_dict(config)
        if config.architecture != "xlmr":
            raise ValueError(f"XLMRobertaPretrainingModel needs architecture 'xlmr', got {config.architecture!r}")
        super().__init__(config.replace(architecture="roberta"), **kwargs)
        self.config = config
