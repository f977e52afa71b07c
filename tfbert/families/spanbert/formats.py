"""SpanBERT's checkpoint format: BERT's Hugging Face layout with the masked-LM head alone (no SBO head).

Example:
    >>> HUGGINGFACE.model_type, HUGGINGFACE.reads
    ('bert', False)
"""

from __future__ import annotations

from tfbert.families.bert.formats import MASKED_LM_NAMES, bert_layout, pooler_classifier_weights

HUGGINGFACE = bert_layout(
    "bert", "bert", head_weights=MASKED_LM_NAMES, reads=False, class_prefix="Bert",
    classifier_weights=pooler_classifier_weights("bert"),
    # Written as BertForMaskedLM: the MLM head; Hugging Face has no span boundary head.
    pretraining_class="BertForMaskedLM", pretraining_pooler=False,
    no_heads="SpanBERT's checkpoints are BERT checkpoints without the SBO head")
