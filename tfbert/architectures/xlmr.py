"""XLM-R (Conneau et al. 2020, https://arxiv.org/abs/1911.02116): RoBERTa with a 250k SentencePiece vocabulary."""

from __future__ import annotations

from tfbert.architectures.registry import register
from tfbert.architectures.roberta import ROBERTA_ENCODER_DEFAULTS, keras_hub_roberta_format, roberta_format
from tfbert.architectures.spec import ArchitectureSpec, ExampleRecipe


def build_xlmr_pretraining_model(config, objectives: tuple[str, ...], seed: int | None, dtype: str | None):
    from tfbert.models.xlmr import XLMRobertaPretrainingModel

    return XLMRobertaPretrainingModel(config, dtype=dtype)


SPEC = register(ArchitectureSpec(
    name="xlmr",
    summary="XLM-R: RoBERTa's recipe with a multilingual SentencePiece vocabulary",
    tokenizer="sentencepiece",
    packing_style="roberta",
    encoder_defaults=ROBERTA_ENCODER_DEFAULTS,
    objectives=("mlm",),
    default_objectives=("mlm",),
    examples=ExampleRecipe("full_sentences"),
    pretraining_model=build_xlmr_pretraining_model,
    pretraining_models=("XLMRobertaPretrainingModel",),
    optimizer="roberta",
    export_tasks=("fill_mask",),
    formats={"huggingface": roberta_format("xlm-roberta"),
             # keras-hub's XLMRobertaTokenizer shifts SentencePiece ids by one, as fairseq did.
             "keras_hub": keras_hub_roberta_format("XLMRobertaBackbone", tokenizer_ids_match=False)},
))
