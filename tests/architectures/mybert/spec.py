"""MyBERT: BERT's encoder and masked-LM head under another name and Hugging Face `model_type`, packed
RoBERTa-style with one segment type."""

from mybert import formats
from tfbert.architectures import MLM_PRETRAINING_MODEL, ArchitectureSpec, ExampleRecipe

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
    optimizer="bert",
    export_tasks=("fill_mask",),
    formats={"huggingface": formats.HUGGINGFACE},
)
