"""RoBERTa (Liu et al. 2019, https://arxiv.org/abs/1907.11692): BERT's encoder, MLM on full sentences, byte BPE.

Positions start past the padding id (`position_offset: pad_id + 1`), there is one segment type,
and pairs are packed `<s> a </s></s> b </s>`.

Example:
    >>> SPEC.packing_style, SPEC.encoder_defaults["position_offset"]
    ('roberta', 2)
"""

from __future__ import annotations

from tfbert.architectures.spec import MLM_PRETRAINING_MODEL, ArchitectureSpec, ExampleRecipe
from tfbert.families.roberta import formats

SPEC = ArchitectureSpec(
    name="roberta",
    summary="RoBERTa: masked-LM on full sentences, no NSP, byte-level BPE",
    tokenizer="byte_bpe",
    packing_style="roberta",
    encoder_defaults=formats.ROBERTA_ENCODER_DEFAULTS,
    objectives=("mlm",),
    default_objectives=("mlm",),
    examples=ExampleRecipe("full_sentences"),
    pretraining_model=MLM_PRETRAINING_MODEL,
    package=__package__,
    optimizer="roberta",
    export_tasks=("fill_mask",),
    formats={"huggingface": formats.HUGGINGFACE, "keras_hub": formats.KERAS_HUB},
)
