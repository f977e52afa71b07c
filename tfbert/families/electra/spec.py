"""ELECTRA (Clark et al. 2020, https://arxiv.org/abs/2003.10555): a generator's MLM, a discriminator's RTD.

A config holds the discriminator (`encoder`) and the generator (`generator`), which share the
embedding layer (`tfbert.families.electra.models`). Hugging Face stores them as two checkpoints
(`HuggingFaceFormat.pretraining_checkpoints`), read together by
`tfbert.families.electra.checkpoints.load_electra`.

Example:
    >>> SPEC.generator, SPEC.generator_embeddings
    (True, 'shared')
"""

from __future__ import annotations

from tfbert.architectures.spec import ENCODER_LAYOUT, EMBEDDING_PROJECTION_LAYOUT, ArchitectureSpec, ExampleRecipe
from tfbert.families.electra import formats

# The generator, narrower than the embeddings it shares: their projection into its hidden size (row-parallel) and its
# masked-LM head's transform back into the split embedding dimension. No BERT `mlm_head`: the discriminator's head
# is one small dense layer, replicated.
GENERATOR_LAYOUT = EMBEDDING_PROJECTION_LAYOUT + (("generator_head/transform/kernel", (None, "model")),)

SPEC = ArchitectureSpec(
    name="electra",
    summary="ELECTRA: generator masked-LM + discriminator replaced-token detection, WordPiece",
    tokenizer="wordpiece",
    packing_style="bert",
    encoder_defaults={"pooler": False},
    generator=True,
    objectives=("mlm", "rtd"),
    default_objectives=("mlm", "rtd"),
    objective_sets={"rtd": ("mlm", "rtd"), "mlm,rtd": ("mlm", "rtd")},
    # Consecutive segments (90% split in two at a sentence boundary), token masking.
    examples=ExampleRecipe("electra_segments"),
    pretraining_model="tfbert.families.electra.models:build_electra_pretraining_model",
    package=__package__,
    keras_classes=("tfbert.families.electra.models:ElectraPretrainingModel",),
    optimizer="electra",
    formats={"huggingface": formats.HUGGINGFACE, "tf1": formats.TF1, "keras_hub": formats.KERAS_HUB},
    layout=ENCODER_LAYOUT + GENERATOR_LAYOUT,
)
