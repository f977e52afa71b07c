"""XLM-R's checkpoint formats: RoBERTa's layouts under XLM-R's `model_type` and class names.

Example:
    >>> HUGGINGFACE.model_type, KERAS_HUB.backbone_class
    ('xlm-roberta', 'XLMRobertaBackbone')
"""

from __future__ import annotations

from tfbert.families.roberta.formats import keras_hub_roberta_format, roberta_format

HUGGINGFACE = roberta_format("xlm-roberta", "XLMRoberta")
# keras-hub's XLMRobertaTokenizer shifts SentencePiece ids by one, as fairseq did.
KERAS_HUB = keras_hub_roberta_format("XLMRobertaBackbone", tokenizer_ids_match=False)
