"""MyBERT's checkpoint formats: Hugging Face `config.json` says model_type `mybert`; BERT's weight names
under `bert.`."""

from tfbert.families.bert.formats import bert_layout

HUGGINGFACE = bert_layout("mybert", "bert")
