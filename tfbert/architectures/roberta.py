"""RoBERTa (Liu et al. 2019, https://arxiv.org/abs/1907.11692): BERT's encoder, MLM on full sentences, byte BPE.

Positions start past the padding id (`position_offset: pad_id + 1`), there is one segment type,
and pairs are packed `<s> a </s></s> b </s>`.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from tfbert.architectures.bert import bert_layout, build_mlm_pretraining_model, read_bert_fields
from tfbert.architectures.registry import register
from tfbert.architectures.spec import ArchitectureSpec, Assignment, ExampleRecipe
from tfbert.config import EncoderConfig
from tfbert.convert import weights


def read_roberta_config(hf: Mapping[str, Any]) -> EncoderConfig:
    fields = read_bert_fields(hf)
    return EncoderConfig(**fields, position_offset=fields["pad_id"] + 1)


def roberta_head_weights(model) -> Iterator[Assignment]:
    """`RobertaForMaskedLM`'s `lm_head` (no sentence-pair head)."""
    yield from weights.masked_lm_head(model.get_layer("mlm_head"), "lm_head.dense", "lm_head.layer_norm",
                                      "lm_head.bias")


SPEC = register(ArchitectureSpec(
    name="roberta",
    summary="RoBERTa: masked-LM on full sentences, no NSP, byte-level BPE",
    tokenizer="byte_bpe",
    packing_style="roberta",
    # One type row, padding id 1, positions from pad_id + 1.
    encoder_defaults={"type_vocab_size": 1, "pad_id": 1, "position_offset": 2},
    objectives=("mlm",),
    default_objectives=("mlm",),
    examples=ExampleRecipe("full_sentences"),
    pretraining_model=build_mlm_pretraining_model,
    pretraining_models=("PretrainingModel",),
    optimizer="roberta",
    export_tasks=("fill_mask",),
    formats={"huggingface": bert_layout("roberta", "roberta", read_roberta_config, roberta_head_weights)},
))
