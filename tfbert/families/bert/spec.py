"""BERT (Devlin et al. 2019, https://arxiv.org/abs/1810.04805): MLM + next-sentence prediction.

The spec is plain data (`tfbert.architectures.ArchitectureSpec`); the checkpoint formats are in
`tfbert.families.bert.formats`, the shared Hugging Face, TF1 and keras-hub layouts most families build on.

Example:
    >>> SPEC.default_objectives, tuple(SPEC.formats)
    (('mlm', 'nsp'), ('huggingface', 'tf1', 'keras_hub'))
"""

from __future__ import annotations

from tfbert.architectures.spec import MLM_PRETRAINING_MODEL, ArchitectureSpec, ExampleRecipe
from tfbert.families.bert import formats

SPEC = ArchitectureSpec(
    name="bert",
    summary="BERT: masked-LM + next-sentence prediction, WordPiece",
    tokenizer="wordpiece",
    packing_style="bert",
    objectives=("mlm", "nsp"),
    default_objectives=("mlm", "nsp"),
    objective_sets={"mlm": ("mlm",), "mlm,nsp": ("mlm", "nsp")},
    examples=ExampleRecipe("nsp", data_label="next_sentence_labels", model_label="nsp_labels"),
    pretraining_model=MLM_PRETRAINING_MODEL,
    package=__package__,
    optimizer="bert",
    export_tasks=("fill_mask",),
    formats={"huggingface": formats.HUGGINGFACE, "tf1": formats.TF1, "keras_hub": formats.KERAS_HUB},
)
