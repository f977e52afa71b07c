"""ALBERT (Lan et al. 2020, https://arxiv.org/abs/1909.11942): shared layers, factorized embeddings, MLM + SOP.

Example:
    >>> SPEC.encoder_defaults["sharing"], SPEC.examples.masking_unit
    ('all', 'ngram')
"""

from __future__ import annotations

from tfbert.architectures.spec import (DEFAULT_LAYOUT, EMBEDDING_PROJECTION_LAYOUT, MLM_PRETRAINING_MODEL,
                                       ArchitectureSpec, ExampleRecipe)
from tfbert.families.albert import formats

SPEC = ArchitectureSpec(
    name="albert",
    summary="ALBERT: cross-layer sharing, factorized embeddings, masked-LM (n-grams) + sentence order, SentencePiece",
    tokenizer="sentencepiece",
    packing_style="bert",
    encoder_defaults={"sharing": "all", "embedding_size": 128},
    objectives=("mlm", "sop"),
    default_objectives=("mlm", "sop"),
    objective_sets={"mlm": ("mlm",), "mlm,sop": ("mlm", "sop")},
    examples=ExampleRecipe("sop", masking_unit="ngram", data_label="sentence_order_labels", model_label="sop_labels"),
    pretraining_model=MLM_PRETRAINING_MODEL,
    package=__package__,
    optimizer="albert",
    export_tasks=("fill_mask",),
    formats={"huggingface": formats.HUGGINGFACE, "tf1": formats.TF1, "keras_hub": formats.KERAS_HUB},
    # The factorized embeddings: the split embedding dimension projected up to the hidden size.
    layout=DEFAULT_LAYOUT + EMBEDDING_PROJECTION_LAYOUT,
)
