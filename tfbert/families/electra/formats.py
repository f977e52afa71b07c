"""ELECTRA's checkpoint formats: Hugging Face's two checkpoints, Google's hparams, keras-hub's backbone.

Example:
    >>> TF1.config_file, HUGGINGFACE.pretraining_checkpoints is not None
    ('hparams.json', True)
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from tfbert.architectures.spec import Assignment, HuggingFaceFormat, KerasHubFormat, TF1Format
from tfbert.convert import weights
from tfbert.families.bert import formats as bert
from tfbert.families.bert.formats import (read_bert_fields, read_google_fields, read_keras_hub_fields,
                                          write_bert_fields, write_google_fields, write_keras_hub_fields)

if TYPE_CHECKING:
    from tfbert.config import EncoderConfig


def read_electra_config(hf: Mapping[str, Any]) -> dict[str, Any]:
    return dict(**read_bert_fields(hf), embedding_size=hf.get("embedding_size", 128), pooler=False)


def write_electra_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "none":
        raise ValueError("Hugging Face ELECTRA has no layer sharing")
    return {**write_bert_fields(encoder), "embedding_size": encoder.embedding_size}


# `ElectraModel`: BERT's layout plus `embeddings_project` when the embeddings are narrower or wider than the layers.
HUGGINGFACE_NAMES = dataclasses.replace(bert.HUGGINGFACE_NAMES, projection="embeddings_project")


def discriminator_head_weights(model) -> Iterator[Assignment]:
    """`ElectraForPreTraining`'s `discriminator_predictions` on an `ElectraPretrainingModel`."""
    head = model.get_layer("discriminator_head")
    yield from weights.dense(head.dense, "discriminator_predictions.dense")
    yield from weights.dense(head.prediction, "discriminator_predictions.dense_prediction")


def generator_head_weights(model) -> Iterator[Assignment]:
    """`ElectraForMaskedLM`'s `generator_predictions` and `generator_lm_head` bias."""
    yield from weights.masked_lm_head(model.get_layer("generator_head"), "generator_predictions.dense",
                                      "generator_predictions.LayerNorm", "generator_lm_head.bias")


def electra_checkpoints(model) -> dict[str, tuple[EncoderConfig, str, list[Assignment]]]:
    """An `ElectraPretrainingModel` as Hugging Face's two checkpoints: `discriminator` (`ElectraForPreTraining`)
    and `generator` (`ElectraForMaskedLM`), each with the shared embeddings."""
    return {
        "discriminator": (model.config.encoder, "ElectraForPreTraining",
                          [*HUGGINGFACE_NAMES(model.discriminator, "electra."), *discriminator_head_weights(model)]),
        "generator": (model.config.generator, "ElectraForMaskedLM",
                      [*HUGGINGFACE_NAMES(model.generator, "electra."), *generator_head_weights(model)]),
    }


# google-research/electra: its modeling.py's `gelu` is exact (BERT's is the tanh form).
GOOGLE_ELECTRA_ACTIVATIONS = {"gelu": "gelu", "relu": "relu", "tanh": "tanh"}
# util/training_utils.py `get_bert_config`: `model_size` -> hidden size and layers.
ELECTRA_SIZES = {"small": (256, 12), "base": (768, 12), "large": (1024, 24)}
# modeling.BertConfig's defaults besides the sizes.
GOOGLE_ELECTRA_DEFAULTS = {
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 512, "type_vocab_size": 2, "initializer_range": 0.02,
}
# The hparams (configure_pretraining.py) whose defaults shape the model.
ELECTRA_HPARAM_DEFAULTS = {"model_size": "small", "vocab_size": 30522, "model_hparam_overrides": {},
                           "generator_hidden_size": 0.25, "generator_layers": 1.0}


def electra_bert_config(hparams: Mapping[str, Any]) -> dict[str, Any]:
    """The discriminator's `BertConfig` mapping of ELECTRA hparams, as `get_bert_config` builds it:
    sizes from `model_size`, 64-wide heads and 4x feed-forward unless `model_hparam_overrides` say otherwise."""
    hparams = {**ELECTRA_HPARAM_DEFAULTS, **hparams}
    if hparams["model_size"] not in ELECTRA_SIZES:
        raise ValueError(f"model_size {hparams['model_size']!r} is not one of {', '.join(ELECTRA_SIZES)}")
    hidden, layers = ELECTRA_SIZES[hparams["model_size"]]
    overrides = dict(hparams["model_hparam_overrides"])
    config = {"hidden_size": hidden, "num_hidden_layers": layers, "vocab_size": hparams["vocab_size"], **overrides}
    return {**GOOGLE_ELECTRA_DEFAULTS, **config, "num_attention_heads": max(1, config["hidden_size"] // 64),
            "intermediate_size": 4 * config["hidden_size"], **overrides}


def electra_embedding_size(hparams: Mapping[str, Any]) -> int:
    """`embedding_size`, else 128 for `small` and the hidden size otherwise (configure_pretraining.py)."""
    hparams = {**ELECTRA_HPARAM_DEFAULTS, **hparams}
    default = 128 if hparams["model_size"] == "small" else electra_bert_config(hparams)["hidden_size"]
    return hparams.get("embedding_size") or default


def read_google_electra_config(hparams: Mapping[str, Any]) -> dict[str, Any]:
    """The discriminator of ELECTRA hparams (`--hparams` JSON of run_pretraining.py)."""
    fields = read_google_fields(electra_bert_config(hparams), {}, GOOGLE_ELECTRA_ACTIVATIONS)
    return dict(**fields, embedding_size=electra_embedding_size(hparams), pooler=False)


def read_google_electra_generator(hparams: Mapping[str, Any]) -> dict[str, Any] | None:
    """The generator, as `get_generator_config` scales it (None when `generator_hidden_size` is null)."""
    hparams = {**ELECTRA_HPARAM_DEFAULTS, **hparams}
    if hparams["generator_hidden_size"] is None:
        return None
    config = electra_bert_config(hparams)
    hidden = int(round(config["hidden_size"] * hparams["generator_hidden_size"]))
    config.update(hidden_size=hidden, num_attention_heads=max(1, hidden // 64), intermediate_size=4 * hidden,
                  num_hidden_layers=int(round(config["num_hidden_layers"] * hparams["generator_layers"])))
    fields = read_google_fields(config, {}, GOOGLE_ELECTRA_ACTIVATIONS)
    return dict(**fields, embedding_size=electra_embedding_size(hparams), pooler=False)


def write_google_electra_config(encoder: EncoderConfig) -> dict[str, Any]:
    """ELECTRA hparams of the discriminator `encoder` (sizes as `model_hparam_overrides`)."""
    if encoder.sharing != "none" or encoder.pooler:
        raise ValueError("Google's ELECTRA has no layer sharing and no pooler")
    overrides = write_google_fields(encoder, GOOGLE_ELECTRA_ACTIVATIONS)
    return {"vocab_size": overrides.pop("vocab_size"), "embedding_size": encoder.embedding_size,
            "model_hparam_overrides": overrides}


def count_layers(shapes: Mapping[str, Any], scope: str) -> int:
    """How many `{scope}encoder/layer_{i}/` blocks a checkpoint holds."""
    return len({name.split("/")[2] for name in shapes if name.startswith(f"{scope}encoder/layer_")})


def electra_hparams_from_shapes(shapes: Mapping[str, tuple[int, ...]]) -> dict[str, Any]:
    """The hparams a released checkpoint's shapes imply (heads 64 wide, as ELECTRA's sizes have them)."""
    vocab, embedding = shapes["electra/embeddings/word_embeddings"]
    hidden, intermediate = shapes["electra/encoder/layer_0/intermediate/dense/kernel"]
    layers = count_layers(shapes, "electra/")
    hparams = {"vocab_size": vocab, "embedding_size": embedding, "generator_hidden_size": None,
               "model_hparam_overrides": {
                   "hidden_size": hidden, "num_hidden_layers": layers, "intermediate_size": intermediate,
                   "max_position_embeddings": shapes["electra/embeddings/position_embeddings"][0],
                   "type_vocab_size": shapes["electra/embeddings/token_type_embeddings"][0]}}
    generator = shapes.get("generator/encoder/layer_0/intermediate/dense/kernel")
    if generator is not None:
        hparams.update(generator_hidden_size=generator[0] / hidden,
                       generator_layers=count_layers(shapes, "generator/") / layers)
    return hparams


# `modeling.BertModel` under `electra/` (the generator's layers under `generator/`, sharing ELECTRA's embeddings):
# Google's BERT names plus `embeddings_project` when E != H; no pooler.
TF1_NAMES = dataclasses.replace(bert.TF1_NAMES, projection="embeddings_project", pooler=None)


def google_electra_head_weights(model) -> Iterator[Assignment]:
    """The generator (`generator/`, `generator_predictions/`) and `discriminator_predictions/{dense,dense_1}`."""
    yield from TF1_NAMES(model.generator, "generator/", embeddings=False)
    yield from weights.masked_lm_head(model.get_layer("generator_head"), "generator_predictions/dense",
                                      "generator_predictions/LayerNorm", "generator_predictions/output_bias",
                                      weights.TENSORFLOW)
    head = model.get_layer("discriminator_head")
    yield from weights.dense(head.dense, "discriminator_predictions/dense", weights.TENSORFLOW)
    yield from weights.dense(head.prediction, "discriminator_predictions/dense_1", weights.TENSORFLOW)


def read_keras_hub_electra_config(backbone: Mapping[str, Any]) -> dict[str, Any]:
    """`ElectraBackbone`'s arguments; unlike Google's ELECTRA it has a tanh pooler and the tanh GELU."""
    return dict(**read_keras_hub_fields(backbone, vocabulary_key="vocab_size"),
                         embedding_size=backbone["embedding_dim"], pooler=True)


def write_keras_hub_electra_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.sharing != "none" or not encoder.pooler:
        raise ValueError("keras-hub ElectraBackbone has no layer sharing and has a pooler")
    return {**write_keras_hub_fields(encoder, "ElectraBackbone", vocabulary_key="vocab_size"),
            "embedding_dim": encoder.embedding_size}


# keras-hub `ElectraBackbone`: BertBackbone's variables plus `embeddings_projection` when E != H.
KERAS_HUB_NAMES = dataclasses.replace(bert.KERAS_HUB_NAMES, projection="embeddings_projection")


HUGGINGFACE = HuggingFaceFormat(
    model_type="electra",
    prefix="electra",
    read_config=read_electra_config,
    write_config=write_electra_config,
    encoder_weights=HUGGINGFACE_NAMES,
    no_heads="an ELECTRA checkpoint holds either the generator or the discriminator; load both into one "
             "pretraining model with tfbert.families.electra.checkpoints.load_electra(discriminator_folder, "
             "generator_folder), or pass heads=False",
    ignored_suffixes=("generator_lm_head.weight",),
    class_prefix="Electra",
    pretraining_checkpoints=electra_checkpoints,
)

TF1 = TF1Format(
    marker="electra/encoder/layer_0/attention/self/query/kernel",
    prefix="electra/",
    config_file="hparams.json",
    read_config=read_google_electra_config,
    write_config=write_google_electra_config,
    encoder_weights=TF1_NAMES,
    head_weights=google_electra_head_weights,
    config_from_shapes=electra_hparams_from_shapes,
    read_generator=read_google_electra_generator,
    lowercase=True,
    head_scopes=("generator/", "generator_predictions/", "discriminator_predictions/"),
)

KERAS_HUB = KerasHubFormat(
    backbone_class="ElectraBackbone",
    read_config=read_keras_hub_electra_config,
    write_config=write_keras_hub_electra_config,
    encoder_weights=KERAS_HUB_NAMES,
)
