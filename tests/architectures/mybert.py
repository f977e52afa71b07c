"""A throwaway architecture family, written as a contributor would write `tfbert/architectures/mybert.py`.

BERT's encoder and masked-LM head under another name and Hugging Face `model_type`, packed
RoBERTa-style with one segment type. docs/adding-an-architecture.md shows this file.
"""

from tfbert.architectures import ArchitectureSpec, ExampleRecipe
from tfbert.architectures.bert import MLM_PRETRAINING_MODEL, bert_layout

SPEC = ArchitectureSpec(
    name="mybert",
    summary="MyBERT: BERT's encoder, masked-LM only, RoBERTa's packing and one segment type",
    tokenizer="wordpiece",
    packing_style="roberta",
    encoder_defaults={"type_vocab_size": 1},
    objectives=("mlm",),
    default_objectives=("mlm",),
    examples=ExampleRecipe("full_sentences"),
    pretraining_model=MLM_PRETRAINING_MODEL,
    pretraining_models=("PretrainingModel",),
    optimizer="bert",
    export_tasks=("fill_mask",),
    # Hugging Face checkpoints: config.json says model_type "mybert"; BERT's names under "bert.".
    formats={"huggingface": bert_layout("mybert", "bert")},
)
