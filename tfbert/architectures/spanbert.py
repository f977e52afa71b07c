"""SpanBERT (Joshi et al. 2020, https://arxiv.org/abs/1907.10529): span masking + the span boundary objective.

One segment of full sentences, geometric spans of whole words, MLM + SBO. Its released
checkpoints are BERT checkpoints (the SBO head is not in them), so Hugging Face sees `bert`.
"""

from __future__ import annotations

from tfbert.architectures.bert import bert_layout, bert_masked_lm_weights, pooler_classifier_weights
from tfbert.architectures.registry import register
from tfbert.architectures.spec import ArchitectureSpec, ExampleRecipe

# The batch keys of the SBO inputs, one per prediction slot (see tfbert.data.masking, unit="span").
SPAN_INPUTS = ("span_left_positions", "span_right_positions", "span_offsets")


SPEC = register(ArchitectureSpec(
    name="spanbert",
    summary="SpanBERT: masked spans + span boundary objective on one segment, WordPiece",
    tokenizer="wordpiece",
    packing_style="bert",
    objectives=("mlm", "sbo"),
    default_objectives=("mlm", "sbo"),
    examples=ExampleRecipe("full_sentences", masking_unit="span", extra_inputs=SPAN_INPUTS),
    pretraining_model="tfbert.models.spanbert:build_spanbert_pretraining_model",
    pretraining_models=("SpanBertPretrainingModel",),
    formats={"huggingface": bert_layout(
        "bert", "bert", head_weights=bert_masked_lm_weights, reads=False, class_prefix="Bert",
        classifier_weights=pooler_classifier_weights("bert"),
        # Written as BertForMaskedLM: the MLM head; Hugging Face has no span boundary head.
        pretraining_class="BertForMaskedLM", pretraining_pooler=False,
        no_heads="SpanBERT's checkpoints are BERT checkpoints without the SBO head")},
))
