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

ELECTRA's generator and discriminator are two checkpoints, which its family's
`tfbert.families.electra.checkpoints.load_electra` puts into one model with
`read_checkpoint` and `copy_weights`.

Example:
    >>> from tfbert.convert.huggingface import load_huggingface
    >>> encoder = load_huggingface("all-MiniLM-L6-v2/")               # Encoder
    >>> pretrainer = load_huggingface("bert-base-uncased/", heads=True) # PretrainingModel (folders with heads: not in the test assets)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import keras
import numpy as np

from tfbert.artifacts.checks import json_object
from tfbert.artifacts.files import check_huggingface_config
from tfbert.artifacts.layout import HUGGINGFACE_CONFIG_FILE as CONFIG_FILE
from tfbert import architectures
from tfbert.architectures import ArchitectureSpec, HuggingFaceFormat
from tfbert.architectures.spec import Assignment
from tfbert.convert import weights
from tfbert.config import EncoderConfig, ModelConfig
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


def _refused_as_unsafe(error: Exception) -> bool:
    """Whether torch's weights-only unpickler refused something other than tensors (a global such as `os.system`),
    rather than meeting the end of a cut-off file."""
    text = str(error)
    return "GLOBAL" in text or "Unsupported" in text or "unsupported" in text


def _damaged(path: Path, error: Exception) -> ValueError:
    first_line = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
    return ValueError(f"{path} is damaged or cut off, not a complete PyTorch checkpoint ({first_line[:120]}); "
                      "download or copy it again")


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
    except pickle.UnpicklingError as error:
        if not _refused_as_unsafe(error):
            raise _damaged(path, error) from None
        raise ValueError(f"{path} is not a PyTorch checkpoint of plain tensors (torch.load with weights_only=True "
                         "refused it); no other pickle is ever loaded, as it could run code: convert the checkpoint "
                         "to model.safetensors where it was made") from None
    except (RuntimeError, EOFError, OSError) as error:   # a truncated or damaged file, not a refused pickle
        raise _damaged(path, error) from None
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


def read_checkpoint(folder: str | Path, architecture: str) -> tuple[dict[str, np.ndarray], str]:
    """A checkpoint folder's state dict (LayerNorm names as today's) and the prefix `architecture`'s encoder has in
    it (`"electra."` in a checkpoint with heads, else `""`)."""
    state = _with_legacy_names(read_state_dict(folder))
    return state, _prefix(state, architecture)


def copy_weights(assignments, state: Mapping[str, np.ndarray], prefix: str, folder: Path | None = None) -> set[str]:
    """Assigns every (variable, names, fn) from `state`; returns the names used. See `load_state_dict`."""
    source, config = ("checkpoint", CONFIG_FILE) if folder is None else (f"checkpoint {folder}", folder / CONFIG_FILE)
    return weights.copy_weights(assignments, state, source, str(config),
                                is_pooler=lambda name: name.startswith(f"{prefix}pooler"))


def unused_names(state: Mapping[str, np.ndarray], used: set[str], architecture: str) -> list[str]:
    """The names of `state` no weight was copied from, less those no tfbert weight comes from (tied decoders)."""
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
    return unused_names(state, copy_weights(_assignments(model, architecture, prefix), state, prefix, folder),
                        architecture)


def _read_config(folder: Path) -> dict[str, Any]:
    config_file = folder / CONFIG_FILE
    if not config_file.is_file():
        raise FileNotFoundError(f"{str(config_file)!r} does not exist: a Hugging Face checkpoint folder needs config.json")
    config = json_object(config_file)
    check_huggingface_config(config, config_file)   # every field tfbert reads, by type (`FileContentError`)
    return config


def _read_model_config(folder: Path) -> tuple[dict[str, Any], ModelConfig]:
    """`config.json` of `folder` and its tfbert config; `ValueError` naming the file and the field at fault."""
    hf_config = _read_config(folder)
    try:
        return hf_config, config_from_huggingface(hf_config)
    except KeyError as error:
        raise ValueError(f"{folder / CONFIG_FILE}: required field {error} is missing") from None
    except (AttributeError, TypeError, ValueError) as error:
        raise ValueError(f"{folder / CONFIG_FILE}: {error}") from None


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
    checkpoints go through `tfbert.families.electra.checkpoints.load_electra`.

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
