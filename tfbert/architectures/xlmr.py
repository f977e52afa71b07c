"""XLM-R (Conneau et al. 2020, https://arxiv.org/abs/1911.02116): RoBERTa with a 250k SentencePiece vocabulary.

Everything but the tokenizer, the model class and the checkpoints' `model_type` is RoBERTa's.
"""

from __future__ import annotations

import dataclasses

from tfbert.architectures import roberta
from tfbert.architectures.registry import register


SPEC = register(dataclasses.replace(
    roberta.SPEC,
    name="xlmr",
    summary="XLM-R: RoBERTa's recipe with a multilingual SentencePiece vocabulary",
    tokenizer="sentencepiece",
    pretraining_model="tfbert.models.xlmr:build_xlmr_pretraining_model",
    pretraining_models=("XLMRobertaPretrainingModel",),
    formats={"huggingface": roberta.roberta_format("xlm-roberta", "XLMRoberta"),
             # keras-hub's XLMRobertaTokenizer shifts SentencePiece ids by one, as fairseq did.
             "keras_hub": roberta.keras_hub_roberta_format("XLMRobertaBackbone", tokenizer_ids_match=False)},
))
