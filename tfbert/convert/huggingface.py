"""Load Hugging Face `transformers` checkpoints (BERT, ALBERT, RoBERTa) into tfbert models.

A checkpoint is a folder with `config.json` and `model.safetensors` (also
sharded, with `model.safetensors.index.json`) or `pytorch_model.bin`. Weights
are matched by name, transposed where PyTorch and Keras lay them out
differently, and the query/key/value projections are fused into tfbert's one
`query_key_value` matrix. Every weight the model needs must be found; a
missing one raises an error naming it.

Example:
    >>> from tfbert.convert.huggingface import load_huggingface
    >>> encoder = load_huggingface("all-MiniLM-L6-v2/")               # Encoder
    >>> pretrainer = load_huggingface("bert-base-uncased/", heads=True) # PretrainingModel
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from tfbert.config import EncoderConfig, ModelConfig
from tfbert.models.encoder import Encoder
from tfbert.models.pretraining import PretrainingModel

_ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "gelu_new",
    "gelu_pytorch_tanh": "gelu_new",
    "gelu_fast": "gelu_new",
    "relu": "relu",
    "silu": "silu",
    "swish": "silu",
    "tanh": "tanh",
}
_ARCHITECTURES = {"bert": "bert", "albert": "albert", "roberta": "roberta"}
# Tensors a checkpoint may hold that no tfbert weight comes from.
_IGNORED_SUFFIXES = ("position_ids", "token_type_ids", "decoder.weight", "decoder.bias", "masked_bias")

Transform = Callable[[np.ndarray], np.ndarray]


def _identity(array: np.ndarray) -> np.ndarray:
    return array


def _transpose(array: np.ndarray) -> np.ndarray:
    return array.T


def config_from_huggingface(hf_config: Mapping[str, Any]) -> ModelConfig:
    """The tfbert `ModelConfig` equivalent to a Hugging Face `config.json` mapping."""
    model_type = hf_config.get("model_type")
    if model_type not in _ARCHITECTURES:
        raise ValueError(
            f"Hugging Face model_type {model_type!r} is not supported; supported: {', '.join(_ARCHITECTURES)}"
        )
    activation = hf_config.get("hidden_act", "gelu")
    if activation not in _ACTIVATIONS:
        raise ValueError(f"Hugging Face hidden_act {activation!r} is not supported; supported: {', '.join(_ACTIVATIONS)}")
    if hf_config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(
            f"position_embedding_type {hf_config['position_embedding_type']!r} is not supported; only 'absolute'"
        )
    pad_id = hf_config.get("pad_token_id") or 0
    fields = dict(
        vocab_size=hf_config["vocab_size"],
        hidden_size=hf_config["hidden_size"],
        num_layers=hf_config["num_hidden_layers"],
        num_heads=hf_config["num_attention_heads"],
        intermediate_size=hf_config["intermediate_size"],
        activation=_ACTIVATIONS[activation],
        dropout_rate=hf_config.get("hidden_dropout_prob", 0.1),
        attention_dropout_rate=hf_config.get("attention_probs_dropout_prob", 0.1),
        max_positions=hf_config.get("max_position_embeddings", 512),
        type_vocab_size=hf_config.get("type_vocab_size", 2),
        layer_norm_epsilon=hf_config.get("layer_norm_eps", 1e-12),
        initializer_range=hf_config.get("initializer_range", 0.02),
        pad_id=pad_id,
    )
    if model_type == "albert":
        fields.update(
            embedding_size=hf_config.get("embedding_size", 128),
            sharing="all",
            num_hidden_groups=hf_config.get("num_hidden_groups", 1),
            inner_group_num=hf_config.get("inner_group_num", 1),
        )
    if model_type == "roberta":
        fields.update(position_offset=pad_id + 1)
    return ModelConfig(
        architecture=_ARCHITECTURES[model_type],
        encoder=EncoderConfig(**fields),
        description=f"converted from Hugging Face {hf_config.get('_name_or_path') or model_type}",
    )


def huggingface_config(config: ModelConfig) -> dict[str, Any]:
    """The Hugging Face `config.json` mapping of a tfbert BERT, ALBERT or RoBERTa config."""
    encoder = config.encoder
    model_type = {value: key for key, value in _ARCHITECTURES.items()}.get(config.architecture)
    if model_type is None:
        raise ValueError(f"architecture {config.architecture!r} has no Hugging Face equivalent here")
    if model_type == "albert" and encoder.sharing != "all":
        raise ValueError(f"Hugging Face ALBERT shares whole layers; sharing {encoder.sharing!r} has no equivalent")
    if model_type != "albert" and (encoder.sharing != "none" or encoder.embedding_size != encoder.hidden_size):
        raise ValueError(f"Hugging Face {model_type} has neither layer sharing nor factorized embeddings")
    hf = dict(
        model_type=model_type,
        vocab_size=encoder.vocab_size,
        hidden_size=encoder.hidden_size,
        num_hidden_layers=encoder.num_layers,
        num_attention_heads=encoder.num_heads,
        intermediate_size=encoder.intermediate_size,
        hidden_act=encoder.activation,
        hidden_dropout_prob=encoder.dropout_rate,
        attention_probs_dropout_prob=encoder.attention_dropout_rate,
        max_position_embeddings=encoder.max_positions,
        type_vocab_size=encoder.type_vocab_size,
        layer_norm_eps=encoder.layer_norm_epsilon,
        initializer_range=encoder.initializer_range,
        pad_token_id=encoder.pad_id,
    )
    if model_type == "albert":
        hf.update(
            embedding_size=encoder.embedding_size,
            num_hidden_groups=encoder.num_hidden_groups,
            inner_group_num=encoder.inner_group_num,
        )
    return hf


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
    from safetensors.numpy import load_file

    state: dict[str, np.ndarray] = {}
    for file in files:
        for name, array in load_file(str(file)).items():
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
    state = torch.load(str(path), map_location="cpu", weights_only=True)
    return {name: tensor.float().numpy() if tensor.is_floating_point() else tensor.numpy() for name, tensor in state.items()}


def _prefix(state: Mapping[str, np.ndarray], architecture: str) -> str:
    for prefix in (f"{architecture}.", ""):
        if f"{prefix}embeddings.word_embeddings.weight" in state:
            return prefix
    raise ValueError(
        f"checkpoint has no '{architecture}.embeddings.word_embeddings.weight' or "
        "'embeddings.word_embeddings.weight': it is not a supported BERT-family checkpoint"
    )


def _layer_norm(name: str) -> list[tuple[str, Transform]]:
    return [(f"{name}.weight", _identity), (f"{name}.bias", _identity)]


def _dense(name: str) -> list[tuple[str, Transform]]:
    return [(f"{name}.weight", _transpose), (f"{name}.bias", _identity)]


def _fused_qkv(names: tuple[str, str, str]) -> list[tuple[tuple[str, ...], Callable[..., np.ndarray]]]:
    return [
        (tuple(f"{n}.weight" for n in names), lambda *w: np.concatenate([a.T for a in w], axis=1)),
        (tuple(f"{n}.bias" for n in names), lambda *b: np.concatenate(b, axis=0)),
    ]


def _assignments(model: Encoder | PretrainingModel, architecture: str, prefix: str) -> Iterator[tuple[Any, tuple[str, ...], Callable]]:
    """(tfbert variable, checkpoint names, function of those arrays) for every weight of `model`."""
    encoder = model.encoder if isinstance(model, PretrainingModel) else model
    config = encoder.config
    p = prefix

    def pairs(variables, specs):
        for variable, (names, fn) in zip(variables, specs):
            yield variable, names if isinstance(names, tuple) else (names,), fn

    embeddings = encoder.get_layer("embeddings")
    yield embeddings.token_embedding.embeddings, (f"{p}embeddings.word_embeddings.weight",), _identity
    yield embeddings.position_embedding.embeddings, (f"{p}embeddings.position_embeddings.weight",), _identity
    if embeddings.segment_embedding is not None:
        yield embeddings.segment_embedding.embeddings, (f"{p}embeddings.token_type_embeddings.weight",), _identity
    yield from pairs(embeddings.layer_norm.weights, _layer_norm(f"{p}embeddings.LayerNorm"))

    if architecture == "albert":
        yield from pairs(encoder.get_layer("embedding_projection").weights, _dense(f"{p}encoder.embedding_hidden_mapping_in"))
        for group in range(config.num_hidden_groups):
            for inner in range(config.inner_group_num):
                layer = next(i for i in range(config.num_layers) if config.group_of_layer(i) == group)
                attention, ffn = encoder.block(layer, inner)
                base = f"{p}encoder.albert_layer_groups.{group}.albert_layers.{inner}."
                yield from pairs(attention.query_key_value.weights, _fused_qkv(tuple(f"{base}attention.{n}" for n in ("query", "key", "value"))))
                yield from pairs(attention.output_dense.weights, _dense(f"{base}attention.dense"))
                yield from pairs(attention.layer_norm.weights, _layer_norm(f"{base}attention.LayerNorm"))
                yield from pairs(ffn.intermediate.weights, _dense(f"{base}ffn"))
                yield from pairs(ffn.output_dense.weights, _dense(f"{base}ffn_output"))
                yield from pairs(ffn.layer_norm.weights, _layer_norm(f"{base}full_layer_layer_norm"))
        yield from pairs(encoder.get_layer("pooler").weights, _dense(f"{p}pooler"))
    else:
        for layer in range(config.num_layers):
            attention, ffn = encoder.block(layer)
            base = f"{p}encoder.layer.{layer}."
            yield from pairs(attention.query_key_value.weights, _fused_qkv(tuple(f"{base}attention.self.{n}" for n in ("query", "key", "value"))))
            yield from pairs(attention.output_dense.weights, _dense(f"{base}attention.output.dense"))
            yield from pairs(attention.layer_norm.weights, _layer_norm(f"{base}attention.output.LayerNorm"))
            yield from pairs(ffn.intermediate.weights, _dense(f"{base}intermediate.dense"))
            yield from pairs(ffn.output_dense.weights, _dense(f"{base}output.dense"))
            yield from pairs(ffn.layer_norm.weights, _layer_norm(f"{base}output.LayerNorm"))
        yield from pairs(encoder.get_layer("pooler").weights, _dense(f"{p}pooler.dense"))

    if isinstance(model, PretrainingModel):
        mlm = model.get_layer("mlm_head")
        head = {"bert": "cls.predictions.transform.", "albert": "predictions.", "roberta": "lm_head."}[architecture]
        norm = {"bert": "LayerNorm", "albert": "LayerNorm", "roberta": "layer_norm"}[architecture]
        yield from pairs(mlm.transform.weights, _dense(f"{head}dense"))
        yield from pairs(mlm.layer_norm.weights, _layer_norm(f"{head}{norm}"))
        bias = {"bert": "cls.predictions.bias", "albert": "predictions.bias", "roberta": "lm_head.bias"}[architecture]
        yield mlm.output_bias, (bias,), _identity
        if model.pair_objective:
            pair = {"bert": "cls.seq_relationship", "albert": "sop_classifier.classifier"}[architecture]
            yield from pairs(model.get_layer(f"{model.pair_objective}_head").classifier.weights, _dense(pair))


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


def load_state_dict(model: Encoder | PretrainingModel, state: Mapping[str, np.ndarray], architecture: str) -> list[str]:
    """Copies a Hugging Face state dict into `model`; returns the checkpoint names it did not use.

    Raises `ValueError` naming every missing tensor, or a tensor whose shape
    does not fit the tfbert weight. The pooler alone may be absent (RoBERTa's
    masked-LM checkpoints have none): it then keeps its initial weights, with a
    warning.
    """
    state = _with_legacy_names(dict(state))
    prefix = _prefix(state, architecture)
    used: set[str] = set()
    missing: list[str] = []
    initialised: list[str] = []
    for variable, names, fn in _assignments(model, architecture, prefix):
        absent = [name for name in names if name not in state]
        if absent:
            (initialised if names[0].startswith(f"{prefix}pooler") else missing).extend(absent)
            continue
        value = fn(*(state[name] for name in names))
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(
                f"checkpoint tensor(s) {', '.join(names)} give shape {tuple(value.shape)} but tfbert weight "
                f"{variable.path} has shape {tuple(variable.shape)}; does config.json match the weights?"
            )
        variable.assign(value)
        used.update(names)
    if missing:
        raise ValueError(f"checkpoint is missing {len(missing)} tensor(s) the model needs: {', '.join(missing[:10])}")
    if initialised:
        warnings.warn(f"checkpoint has no pooler ({', '.join(initialised)}); the pooler keeps its initial weights",
                      stacklevel=2)
    return sorted(name for name in state if name not in used and not name.endswith(_IGNORED_SUFFIXES))


def load_huggingface(folder: str | Path, heads: bool = False, dtype: str | None = None) -> Encoder | PretrainingModel:
    """Builds a tfbert model from a Hugging Face checkpoint folder and loads its weights.

    `heads=False` gives the `Encoder` (any BERT/ALBERT/RoBERTa checkpoint);
    `heads=True` gives the `PretrainingModel` with the MLM and NSP/SOP heads,
    which the checkpoint must contain (e.g. `BertForPreTraining`).
    """
    folder = Path(folder)
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"{str(config_file)!r} does not exist: a Hugging Face checkpoint folder needs config.json")
    try:
        hf_config = json.loads(config_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{str(config_file)!r} is not valid JSON: {error}") from None
    config = config_from_huggingface(hf_config)
    model = PretrainingModel(config, dtype=dtype) if heads else Encoder(config.encoder, dtype=dtype, name="encoder")
    unused = load_state_dict(model, read_state_dict(folder), config.architecture)
    if unused:
        warnings.warn(f"{folder}: {len(unused)} checkpoint tensor(s) not used: {', '.join(unused[:10])}", stacklevel=2)
    return model
