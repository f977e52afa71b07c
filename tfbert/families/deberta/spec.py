"""DeBERTa-v3 (He et al. 2021, https://arxiv.org/abs/2111.09543): disentangled attention, ELECTRA-style RTD.

The encoder is BERT's post-LN block with `positions: relative`: no absolute position table, the
content-to-position and position-to-content scores over 256 log buckets of relative distance,
one LayerNormed relative table shared by all layers, and the content query/key projections
reused for it (`share_attention_key`). Pretraining is replaced-token detection with
gradient-disentangled embedding sharing (`tfbert.families.deberta.models`); `objectives: [mlm]`
trains a plain masked LM (DeBERTa-v2's recipe). Hugging Face holds it as `model_type: deberta-v2`
(`DebertaV2Model`, `DebertaV2ForMaskedLM` with its default legacy head names).

Example:
    >>> SPEC.encoder_defaults["positions"], SPEC.formats["huggingface"].model_type
    ('relative', 'deberta-v2')
"""

from __future__ import annotations

from tfbert.architectures.spec import ENCODER_LAYOUT, ArchitectureSpec, ExampleRecipe
from tfbert.families.electra.spec import GENERATOR_LAYOUT
from tfbert.families.deberta import formats

# What a DeBERTa-v3 `encoder:` mapping gets unless it says otherwise (the released configs).
DEBERTA_DEFAULTS = {"positions": "relative", "position_buckets": 256, "max_relative_positions": 0,
                    "share_attention_key": True, "type_vocab_size": 0, "layer_norm_epsilon": 1e-7, "pooler": False}

# ELECTRA's generator layout, and the relative table (one per encoder) split by rows: its LayerNorm is per row.
RELATIVE_TABLE_LAYOUT = (("relative_positions/relative_embedding/embeddings", ("model", None)),)
DEBERTA_LAYOUT = ENCODER_LAYOUT + GENERATOR_LAYOUT + RELATIVE_TABLE_LAYOUT


def validate_deberta(config) -> None:
    """Relative positions in the encoder (and generator)."""
    for role, encoder in (("encoder", config.encoder), ("generator", config.generator)):
        if encoder is not None and encoder.positions != "relative":
            raise ValueError(f"invalid config field '{role}.positions': got {encoder.positions!r}; DeBERTa's "
                             "attention is relative (positions: relative)")


SPEC = ArchitectureSpec(
    name="deberta",
    summary="DeBERTa-v3: disentangled relative attention, RTD with gradient-disentangled embeddings, SentencePiece",
    tokenizer="sentencepiece",
    packing_style="bert",
    encoder_defaults=DEBERTA_DEFAULTS,
    validate=validate_deberta,
    generator=True,
    generator_embeddings="disentangled",
    objectives=("mlm", "rtd"),
    default_objectives=("mlm", "rtd"),
    # As ELECTRA: consecutive segments, token masking (15%).
    examples=ExampleRecipe("electra_segments"),
    pretraining_model="tfbert.families.deberta.models:build_deberta_pretraining_model",
    package=__package__,
    keras_classes=("tfbert.families.deberta.models:DebertaRTDModel",),
    optimizer="electra",
    export_tasks=("fill_mask",),
    formats={"huggingface": formats.HUGGINGFACE},
    layout=DEBERTA_LAYOUT,
)
