"""Load Hugging Face `transformers` checkpoints (BERT, ALBERT, RoBERTa, ELECTRA, XLM, XLM-R, ...) into tfbert models.

A checkpoint is a folder with `config.json` and `model.safetensors` (also
sharded, with `model.safetensors.index.json`) or `pytorch_model.bin`.
`config.json`'s `model_type` finds the family in `tfbert.architectures`; the
family's `HuggingFaceFormat` reads the config and names every weight (the
shared layouts are in `tfbert.convert.weights`). Weights are matched by name,
transposed where PyTorch and Keras lay them out differently, and the
query/key/value projections are fused into tfbert's one `query_key_value`
matrix. Every weight the model needs must be found; a missing one raises an
error naming it.

ELECTRA's generator and discriminator are two checkpoints: `load_electra`
puts both into one `ElectraPretrainingModel` (their embeddings are shared).

Example:
    >>> from tfbert.convert.huggingface import load_electra, load_huggingface
    >>> encoder = load_huggingface("all-MiniLM-L6-v2/")               # Encoder
    >>> pretrainer = load_huggingface("bert-base-uncased/", heads=True) # PretrainingModel (folders with heads: not in the test assets)  # doctest: +SKIP
    >>> electra = load_electra("electra-small-discriminator/", "electra-small-generator/")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import keras
import numpy as np

from tfbert import architectures
from tfbert.architectures import ArchitectureSpec, HuggingFaceFormat
from tfbert.architectures.spec import Assignment
from tfbert.convert import weights
from tfbert.config import EncoderConfig, ModelConfig
from tfbert.families.electra import formats as electra
from tfbert.families.electra.models import ElectraPretrainingModel
from tfbert.families.electra.spec import SPEC as ELECTRA
from tfbert.models.encoder import Encoder

FORMAT = "huggingface"
# Tensors any checkpoint may hold that no tfbert weight comes from (tied decoders are the token table);
# a family's `HuggingFaceFormat.ignored_suffixes` adds its own.
IGNORED_SUFFIXES = ("position_ids", "token_type_ids", "decoder.weight", "decoder.bias", "masked_bias")


def _format(architecture: str) -> HuggingFaceFormat:
    return architectures.get(architecture).format(FORMAT)


def config_from_huggingface(hf_config: Mapping[str, Any]) -> ModelConfig:
    """The tfbert `ModelConfig` equivalent to a Hugging Face `config.json` mapping.

    `model_type` picks the family (`tfbert.architectures.with_format`), whose format entry reads the rest.
    """
    model_type = hf_config.get("model_type")
    spec = architectures.with_format(FORMAT, model_type)
    return ModelConfig(
        architecture=spec.name,
        encoder=EncoderConfig(**spec.format(FORMAT).read_config(hf_config)),
        description=f"converted from Hugging Face {hf_config.get('_name_or_path') or model_type}",
    )


def huggingface_config(config: ModelConfig) -> dict[str, Any]:
    """The Hugging Face `config.json` mapping of a tfbert config's encoder (an ELECTRA config's discriminator).

    SpanBERT's checkpoints are BERT checkpoints, so `spanbert` maps to `bert`. Raises `ValueError`
    for an encoder the family's Hugging Face model cannot hold (e.g. layer sharing in BERT).
    """
    entry = _format(config.architecture)
    return {"model_type": entry.model_type, **entry.write_config(config.encoder)}


def read_state_dict(folder: str | Path) -> dict[str, np.ndarray]:
    """All tensors of a Hugging Face checkpoint folder as NumPy arrays (float32 for floats)."""
    folder = Path(folder)
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        files = sorted({folder / name for name in json.loads(index.read_text())["weight_map"].values()})
    elif (folder / "model.safetensors").is_file():
        files = [folder / "model.safetensors"]
    elif (folder / "pytorch_model.bin").is_file():
        return _read_pytorch_bin(folder / "pytorch_model.bin")
    else:
        raise FileNotFoundError(
            f"no weights in {str(folder)!r}: expected model.safetensors, model.safetensors.index.json "
            "or pytorch_model.bin"
        )
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    state: dict[str, np.ndarray] = {}
    for file in files:
        try:
            tensors = load_file(str(file))
        except (SafetensorError, OSError) as error:
            raise ValueError(f"{file} is not a readable safetensors file: {error}") from None
        for name, array in tensors.items():
            state[name] = array.astype(np.float32) if array.dtype.kind == "f" else array
    return state


def _read_pytorch_bin(path: Path) -> dict[str, np.ndarray]:
    try:
        import torch
    except ImportError:
        raise ImportError(
            f"{str(path)!r} is a PyTorch pickle; install torch to read it, or convert the checkpoint to "
            "model.safetensors"
        ) from None
    import pickle
    import warnings

    try:   # weights_only: a pickle holding anything but tensors is refused, never run
        with warnings.catch_warnings():   # torch warns about pickle protocols before refusing a file
            warnings.simplefilter("ignore", UserWarning)
            state = torch.load(str(path), map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError):
        raise ValueError(f"{path} is not a PyTorch checkpoint of plain tensors (torch.load with weights_only=True "
                         "refused it); no other pickle is ever loaded, as it could run code: convert the checkpoint "
                         "to model.safetensors where it was made") from None
    if not isinstance(state, dict) or not all(isinstance(value, torch.Tensor) for value in state.values()):
        raise ValueError(f"{path} holds {type(state).__name__}, not a state dict of tensors; give the model's "
                         "pytorch_model.bin or model.safetensors")
    return {name: tensor.float().numpy() if tensor.is_floating_point() else tensor.numpy() for name, tensor in state.items()}


def _prefix(state: Mapping[str, np.ndarray], architecture: str) -> str:
    """`"bert."` when the state dict nests the encoder under the family's prefix (checkpoints with heads), else `""`."""
    entry = _format(architecture)
    for prefix in (f"{entry.prefix}.", ""):
        if f"{prefix}{entry.token_embedding}" in state:
            return prefix
    raise ValueError(f"checkpoint has no '{entry.prefix}.{entry.token_embedding}' or '{entry.token_embedding}': "
                     f"it is not a supported {architecture} checkpoint")


def _assignments(model: keras.Model, architecture: str, prefix: str) -> Iterable[Assignment]:
    """(tfbert variable, checkpoint names, function of those arrays) for every weight of `model`.

    `model` is an `Encoder` or the family's pretraining model (encoder and heads).
    """
    entry = _format(architecture)
    if isinstance(model, Encoder):
        return entry.encoder_weights(model, prefix)
    return [*entry.encoder_weights(model.encoder, prefix), *entry.head_weights(model)]


def _with_legacy_names(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Old checkpoints name LayerNorm parameters `gamma`/`beta`; use `weight`/`bias`."""
    renamed = {}
    for name, array in state.items():
        if name.endswith(".gamma"):
            name = name[: -len("gamma")] + "weight"
        elif name.endswith(".beta"):
            name = name[: -len("beta")] + "bias"
        renamed[name] = array
    return renamed


def _copy_weights(assignments, state: Mapping[str, np.ndarray], prefix: str, folder: Path | None = None) -> set[str]:
    """Assigns every (variable, names, fn) from `state`; returns the names used. See `load_state_dict`."""
    source, config = ("checkpoint", "config.json") if folder is None else (f"checkpoint {folder}", folder / "config.json")
    return weights.copy_weights(assignments, state, source, str(config),
                                is_pooler=lambda name: name.startswith(f"{prefix}pooler"))


def _unused(state: Mapping[str, np.ndarray], used: set[str], architecture: str) -> list[str]:
    ignored = IGNORED_SUFFIXES + _format(architecture).ignored_suffixes
    return sorted(name for name in state if name not in used and not name.endswith(ignored))


def load_state_dict(model: keras.Model, state: Mapping[str, np.ndarray], architecture: str,
                    folder: Path | None = None) -> list[str]:
    """Copies a Hugging Face state dict into `model`; returns the checkpoint names it did not use.

    `model` is an `Encoder` or `architecture`'s pretraining model. Raises `ValueError` naming
    every missing tensor, or a tensor whose shape does not fit the tfbert weight (and `folder`,
    the checkpoint's, when given). The pooler alone may be absent (RoBERTa's masked-LM
    checkpoints have none): it then keeps its initial weights, with a warning.
    """
    state = _with_legacy_names(dict(state))
    prefix = _prefix(state, architecture)
    return _unused(state, _copy_weights(_assignments(model, architecture, prefix), state, prefix, folder), architecture)


def _read_config(folder: Path) -> dict[str, Any]:
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"{str(config_file)!r} does not exist: a Hugging Face checkpoint folder needs config.json")
    try:
        return json.loads(config_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{str(config_file)!r} is not valid JSON: {error}") from None


def _read_model_config(folder: Path) -> tuple[dict[str, Any], ModelConfig]:
    """`config.json` of `folder` and its tfbert config; `ValueError` naming the file and the field at fault."""
    hf_config = _read_config(folder)
    try:
        return hf_config, config_from_huggingface(hf_config)
    except KeyError as error:
        raise ValueError(f"{folder / 'config.json'}: required field {error} is missing") from None
    except (AttributeError, TypeError, ValueError) as error:
        raise ValueError(f"{folder / 'config.json'}: {error}") from None


def read_folder_config(folder: str | Path) -> ModelConfig:
    """The tfbert config of a Hugging Face checkpoint folder's `config.json` (`ValueError` naming the field at fault)."""
    return _read_model_config(Path(folder))[1]


def _model_with_heads(spec: ArchitectureSpec, config: ModelConfig, hf_config: Mapping[str, Any],
                      dtype: str | None) -> keras.Model:
    """The family's pretraining model for a checkpoint with heads (the objectives it was trained with)."""
    entry = spec.format(FORMAT)
    if entry.head_weights is None:
        raise ValueError(entry.no_heads or f"Hugging Face {entry.model_type} checkpoints hold no heads tfbert reads; "
                                            "pass heads=False")
    objectives = entry.head_objectives(hf_config) if entry.head_objectives else None
    return spec.build_pretraining_model(config, objectives, dtype=dtype)


def load_huggingface(folder: str | Path, heads: bool = False, dtype: str | None = None) -> keras.Model:
    """Builds a tfbert model from a Hugging Face checkpoint folder and loads its weights.

    `config.json`'s `model_type` picks the family (any registered in `tfbert.architectures`
    with a Hugging Face format). `heads=False` gives the `Encoder` (of ELECTRA, the generator's
    or the discriminator's body). `heads=True` gives the family's pretraining model with its
    heads, which the checkpoint must contain: a `PretrainingModel` (e.g. `BertForPreTraining`),
    an `XLMRobertaPretrainingModel` (`XLMRobertaForMaskedLM`) or an `XLMPretrainingModel`
    (`XLMWithLMHeadModel`; objective `clm` when the config is causal). ELECTRA's two
    checkpoints go through `load_electra`.

    Example:
        >>> encoder = load_huggingface("all-MiniLM-L6-v2/")
        >>> encoder.count_params()
        22713216
    """
    folder = Path(folder)
    hf_config, config = _read_model_config(folder)
    spec = architectures.get(config.architecture)
    model = (_model_with_heads(spec, config, hf_config, dtype) if heads
             else Encoder(config.encoder, dtype=dtype, name="encoder", architecture=config.architecture))
    warn_unused(folder, load_state_dict(model, read_state_dict(folder), config.architecture, folder))
    return model


def warn_unused(folder: Path, unused: Sequence[str]) -> None:
    """Warns that the checkpoint in `folder` holds tensors that were not loaded (the first ten named)."""
    if unused:
        warnings.warn(f"{folder}: {len(unused)} checkpoint tensor(s) not used: {', '.join(unused[:10])}", stacklevel=3)


def load_electra(
    discriminator: str | Path,
    generator: str | Path,
    seed: int | None = None,
    rtd_weight: float = 50.0,
    dtype: str | None = None,
) -> ElectraPretrainingModel:
    """One `ElectraPretrainingModel` from a discriminator (`ElectraForPreTraining`) and a
    generator (`ElectraForMaskedLM`) checkpoint folder.

    tfbert's generator shares the discriminator's embeddings, so the
    discriminator's are loaded; if the generator checkpoint's embeddings
    differ (they are equal in checkpoints trained with tied embeddings, such
    as Google's), a warning says so.

    Example:
        >>> model = load_electra("electra-small-discriminator/", "electra-small-generator/", seed=0)   # not in the test assets  # doctest: +SKIP
    """
    folders = {"discriminator": Path(discriminator), "generator": Path(generator)}
    configs = {}
    for role, folder in folders.items():
        configs[role] = _read_model_config(folder)[1]
        if configs[role].architecture != ELECTRA.name:
            raise ValueError(f"{role} checkpoint {str(folder)!r} is {configs[role].architecture!r}, not ELECTRA")
    config = ModelConfig(
        architecture=ELECTRA.name,
        encoder=configs["discriminator"].encoder,
        generator=configs["generator"].encoder,
        description=f"converted from Hugging Face ELECTRA {folders['discriminator'].name} + {folders['generator'].name}",
    )
    model = ElectraPretrainingModel(config, rtd_weight=rtd_weight, seed=seed, dtype=dtype)
    unused = {"discriminator": _load_discriminator(model, folders["discriminator"]),
              "generator": _load_generator(model, folders["generator"])}
    for role, names in unused.items():
        if names:
            warnings.warn(f"{folders[role]}: {len(names)} checkpoint tensor(s) not used: {', '.join(names[:10])}", stacklevel=2)
    return model


def _load_discriminator(model: ElectraPretrainingModel, folder: Path) -> list[str]:
    """The discriminator's encoder (with the shared embeddings) and head; returns the unused names."""
    state = _with_legacy_names(read_state_dict(folder))
    prefix = _prefix(state, ELECTRA.name)
    assignments = [*electra.HUGGINGFACE_NAMES(model.discriminator, prefix),
                   *electra.discriminator_head_weights(model)]
    return _unused(state, _copy_weights(assignments, state, prefix, folder), ELECTRA.name)


def _load_generator(model: ElectraPretrainingModel, folder: Path) -> list[str]:
    """The generator's layers and head; its embeddings are the discriminator's, compared with a warning."""
    state = _with_legacy_names(read_state_dict(folder))
    prefix = _prefix(state, ELECTRA.name)
    assignments = [*electra.HUGGINGFACE_NAMES(model.generator, prefix, embeddings=False),
                   *electra.generator_head_weights(model)]
    used = _copy_weights(assignments, state, prefix, folder)
    differing = []
    for variable, names, fn in electra.HUGGINGFACE_NAMES.embedding_weights(model.generator, prefix):
        if all(name in state for name in names):
            used.update(names)
            if not np.allclose(fn(*(state[name] for name in names)), variable.numpy(), atol=1e-6):
                differing.extend(names)
    if differing:
        warnings.warn(
            f"{folder}: the generator's embeddings differ from the discriminator's "
            f"({', '.join(differing)}); tfbert's ELECTRA shares one set and keeps the discriminator's",
            stacklevel=3,
        )
    return _unused(state, used, ELECTRA.name)
