"""SpanBERT (Joshi et al. 2020, https://arxiv.org/abs/1907.10529): span masking + the span boundary objective.

One segment of full sentences, geometric spans of whole words, MLM + SBO. Its released
checkpoints are BERT checkpoints (the SBO head is not in them), so Hugging Face sees `bert`.

Example:
    >>> SPEC.examples.extra_inputs
    ('span_left_positions', 'span_right_positions', 'span_offsets')
"""

from __future__ import annotations

from tfbert.architectures.spec import ArchitectureSpec, ExampleRecipe
from tfbert.families.spanbert import formats

# The batch keys of the SBO inputs, one per prediction slot (see tfbert.data.masking, unit="span").
SPAN_INPUTS = ("span_left_positions", "span_right_positions", "span_offsets")

SPEC = ArchitectureSpec(
    name="spanbert",
    summary="SpanBERT: masked spans + span boundary objective on one segment, WordPiece",
    tokenizer="wordpiece",
    packing_style="bert",
    objectives=("mlm", "sbo"),
    default_objectives=("mlm", "sbo"),
    examples=ExampleRecipe("full_sentences", masking_unit="span", extra_inputs=SPAN_INPUTS),
    pretraining_model="tfbert.families.spanbert.models:build_spanbert_pretraining_model",
    package=__package__,
    keras_classes=("tfbert.families.spanbert.models:SpanBertPretrainingModel",),
    formats={"huggingface": formats.HUGGINGFACE},
)
