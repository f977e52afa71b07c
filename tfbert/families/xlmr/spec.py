"""XLM-R (Conneau et al. 2020, https://arxiv.org/abs/1911.02116): RoBERTa with a 250k SentencePiece vocabulary.

Everything but the tokenizer, the model class and the checkpoints' `model_type` is RoBERTa's.

Example:
    >>> SPEC.tokenizer, SPEC.packing_style
    ('sentencepiece', 'roberta')
"""

from __future__ import annotations

import dataclasses

from tfbert.families.roberta.spec import SPEC as ROBERTA
from tfbert.families.xlmr import formats

SPEC = dataclasses.replace(
    ROBERTA,
    name="xlmr",
    summary="XLM-R: RoBERTa's recipe with a multilingual SentencePiece vocabulary",
    tokenizer="sentencepiece",
    pretraining_model="tfbert.families.xlmr.models:build_xlmr_pretraining_model",
    package=__package__,
    keras_classes=("tfbert.families.xlmr.models:XLMRobertaPretrainingModel",),
    formats={"huggingface": formats.HUGGINGFACE, "keras_hub": formats.KERAS_HUB},
)
