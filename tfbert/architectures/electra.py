"""ELECTRA (Clark et al. 2020, https://arxiv.org/abs/2003.10555): a generator's MLM, a discriminator's RTD.

A config holds the discriminator (`encoder`) and the generator (`generator`), which share the
embedding layer. Hugging Face stores them as two checkpoints, loaded together by
`tfbert.convert.huggingface.load_electra`.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from tfbert.architectures.bert import (embedding_weights, layer_weights, pooler_weights, read_bert_fields,
                                       write_bert_fields)
from tfbert.architectures.registry import register
from tfbert.architectures.spec import ArchitectureSpec, Assignment, ExampleRecipe, HuggingFaceFormat
from tfbert.config import SHARED_EMBEDDING_FIELDS, EncoderConfig, field_error
from tfbert.convert import weights


def build_electra_pretraining_model(config, objectives: tuple[str, ...], seed: int | None, dtype: str | None):
    from tfbert.models.electra import ElectraPretrainingModel

    return ElectraPretrainingModel(config, seed=seed, dtype=dtype)


def validate_electra(config) -> None:
    """The generator, when there is one, must match the discriminator's embedding hyper-parameters."""
    if config.generator is None:
        return
    for name in SHARED_EMBEDDING_FIELDS:
        ours, theirs = getattr(config.generator, name), getattr(config.encoder, name)
        if ours != theirs:
            raise field_error(f"generator.{name}", ours, "the generator shares the discriminator's embeddings, so it "
                                                         f"must equal encoder.{name} ({theirs!r})")


def read_electra_config(hf: Mapping[str, Any]) -> EncoderConfig:
    return EncoderConfig(**read_bert_fields(hf), embedding_size=hf.get("embedding_size", 128), pooler=False)


def write_electra_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "none":
        raise ValueError("Hugging Face ELECTRA has no layer sharing")
    return {**write_bert_fields(encoder), "embedding_size": encoder.embedding_size}


def electra_encoder_weights(encoder, prefix: str, embeddings: bool = True) -> Iterator[Assignment]:
    """BERT's layout plus `embeddings_project` when the embeddings are narrower or wider than the layers."""
    config = encoder.config
    if embeddings:
        yield from embedding_weights(encoder, prefix)
    if config.embedding_size != config.hidden_size:
        yield from weights.dense(encoder.get_layer("embedding_projection"), f"{prefix}embeddings_project")
    yield from layer_weights(encoder, prefix)
    yield from pooler_weights(encoder, prefix)


def discriminator_head_weights(model) -> Iterator[Assignment]:
    """`ElectraForPreTraining`'s `discriminator_predictions` on an `ElectraPretrainingModel`."""
    head = model.get_layer("discriminator_head")
    yield from weights.dense(head.dense, "discriminator_predictions.dense")
    yield from weights.dense(head.prediction, "discriminator_predictions.dense_prediction")


def generator_head_weights(model) -> Iterator[Assignment]:
    """`ElectraForMaskedLM`'s `generator_predictions` and `generator_lm_head` bias."""
    yield from weights.masked_lm_head(model.get_layer("generator_head"), "generator_predictions.dense",
                                      "generator_predictions.LayerNorm", "generator_lm_head.bias")


SPEC = register(ArchitectureSpec(
    name="electra",
    summary="ELECTRA: generator masked-LM + discriminator replaced-token detection, WordPiece",
    tokenizer="wordpiece",
    packing_style="bert",
    encoder_defaults={"pooler": False},
    validate=validate_electra,
    generator=True,
    objectives=("mlm", "rtd"),
    default_objectives=("mlm", "rtd"),
    # Consecutive segments (90% split in two at a sentence boundary), token masking.
    examples=ExampleRecipe("electra_segments"),
    pretraining_model=build_electra_pretraining_model,
    pretraining_models=("ElectraPretrainingModel",),
    optimizer="electra",
    formats={"huggingface": HuggingFaceFormat(
        model_type="electra",
        prefix="electra",
        read_config=read_electra_config,
        write_config=write_electra_config,
        encoder_weights=electra_encoder_weights,
        no_heads="an ELECTRA checkpoint holds either the generator or the discriminator; load both into one "
                 "pretraining model with load_electra(discriminator_folder, generator_folder), or pass heads=False",
        ignored_suffixes=("generator_lm_head.weight",),
    )},
))
