"""XLM (Lample & Conneau 2019, https://arxiv.org/abs/1901.07291): language embeddings, CLM, MLM and TLM.

`tfbert pretrain` reads XLM's data as `tlm:SRC,TGT`, `mlm:A,B,...` or `clm:A,B,...` (one corpus
per language; its `ExampleRecipe.pipeline`, `tfbert.families.xlm.data`); a `clm:` run trains the
causal objective, the others MLM.

Example:
    >>> SPEC.examples.pipeline, SPEC.objectives_named("tlm")
    ('tfbert.families.xlm.data:multilingual_pipeline', ('mlm',))
"""

from __future__ import annotations

from tfbert.architectures.spec import ENCODER_LAYOUT, ArchitectureSpec, ExampleRecipe
from tfbert.families.xlm import formats

SPEC = ArchitectureSpec(
    name="xlm",
    summary="XLM: language embeddings; causal LM, masked LM or translation LM on parallel text",
    tokenizer="sentencepiece",
    packing_style="roberta",
    encoder_defaults={"type_vocab_size": 0, "pad_id": 2, "pooler": False},
    lm_head="tied",
    objectives=("mlm", "clm"),
    default_objectives=("mlm",),
    objective_sets={"mlm": ("mlm",), "tlm": ("mlm",), "clm": ("clm",)},
    examples=ExampleRecipe("xlm", pipeline="tfbert.families.xlm.data:multilingual_pipeline"),
    pretraining_model="tfbert.families.xlm.models:build_xlm_pretraining_model",
    package=__package__,
    keras_classes=("tfbert.families.xlm.models:XLMPretrainingModel",),
    formats={"huggingface": formats.HUGGINGFACE},
    # The tied head has no transform: the encoder's layout alone.
    layout=ENCODER_LAYOUT,
)
