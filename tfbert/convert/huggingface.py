"""Load Hugging Face `transformers` checkpoints (BERT, ALBERT, RoBERTa, ELECTRA, XLM, XLM-R) into tfbert models.

A checkpoint is a folder with `config.json` and `model.safetensors` (also
sharded, with `model.safetensors.index.json`) or `pytorch_model.bin`. Weights
are matched by name, transposed where PyTorch and Keras lay them out
differently, and the query/key/value projections are fused into tfbert's one
`query_key_value` matrix. Every weight the model needs must be found; a
missing one raises an error naming it.

ELECTRA's generator and discriminator are two checkpoints: `load_electra`
puts both into one `ElectraPretrainingModel` (their embeddings are shared).

Example:
    >>> from tfbert.convert.huggingface import load_electra, load_huggingface
    >>> encoder = load_huggingface("all-MiniLM-L6-v2/")               # Encoder
    >>> pretrainer = load_huggingface("bert-base-uncased/", heads=True) # PretrainingModel
    >>> electra = load_electra("electra-small-discriminator/", "electra-small-generator/")
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from tfbert.config import EncoderConfig, ModelConfig
from tfbert.models.electra import ElectraPretrainingModel
from tfbert.models.encoder import Encoder
from tfbert.models.pretraining import PretrainingModel
from tfbert.models.xlm import XLMPretrainingModel
from tfbert.models.xlmr import XLMRobertaPretrainingModel

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
_ARCHITECTURES = {
    "bert": "bert", "albert": "albert", "roberta": "roberta", "electra": "electra", "xlm-roberta": "xlmr", "xlm": "xlm",
}
# The name of the encoder inside each architecture's checkpoints with heads (`bert.encoder.layer.0...`).
_CHECKPOINT_PREFIX = {
    "bert": "bert", "albert": "albert", "roberta": "roberta", "electra": "electra", "xlmr": "roberta",
    "xlm": "transformer", "spanbert": "bert",
}
# Tensors a checkpoint may hold that no tfbert weight comes from (tied decoders are the token table).
_IGNORED_SUFFIXES = (
    "position_ids", "token_type_ids", "decoder.weight", "decoder.bias", "masked_bias",
    "generator_lm_head.weight", "pred_layer.proj.weight",
)

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
    if model_type == "xlm":
        return _xlm_config_from_huggingface(hf_config)
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
    if model_type in ("roberta", "xlm-roberta"):
        fields.update(position_offset=pad_id + 1)
    if model_type == "electra":
        fields.update(embedding_size=hf_config.get("embedding_size", 128), pooler=False)
    return ModelConfig(
        architecture=_ARCHITECTURES[model_type],
        encoder=EncoderConfig(**fields),
        description=f"converted from Hugging Face {hf_config.get('_name_or_path') or model_type}",
    )


def _xlm_config_from_huggingface(hf_config: Mapping[str, Any]) -> ModelConfig:
    """XLM's `config.json` names its fields differently (`emb_dim`, `n_layers`, `n_langs`, ...)."""
    if hf_config.get("asm", False):
        raise ValueError("XLM checkpoints with an adaptive softmax (asm: true) are not supported")
    if not hf_config.get("is_encoder", True):
        raise ValueError("XLM decoders (is_encoder: false) are not supported")
    languages = hf_config.get("n_langs", 1)
    width = hf_config.get("emb_dim", 2048)
    encoder = EncoderConfig(
        vocab_size=hf_config.get("vocab_size", hf_config.get("n_words", 30145)),
        hidden_size=width,
        num_layers=hf_config.get("n_layers", 12),
        num_heads=hf_config.get("n_heads", 16),
        intermediate_size=4 * width,
        activation="gelu" if hf_config.get("gelu_activation", True) else "relu",
        dropout_rate=hf_config.get("dropout", 0.1),
        attention_dropout_rate=hf_config.get("attention_dropout", 0.1),
        max_positions=hf_config.get("max_position_embeddings", 512),
        type_vocab_size=0,
        num_languages=languages if languages > 1 and hf_config.get("use_lang_emb", True) else 0,
        layer_norm_epsilon=hf_config.get("layer_norm_eps", 1e-12),
        initializer_range=hf_config.get("init_std", 0.02),
        pad_id=hf_config.get("pad_index", 2),
        pooler=False,
    )
    return ModelConfig(
        architecture="xlm",
        encoder=encoder,
        description=f"converted from Hugging Face {hf_config.get('_name_or_path') or 'xlm'}",
    )


def _xlm_huggingface_config(encoder: EncoderConfig) -> dict[str, Any]:
    if encoder.intermediate_size != 4 * encoder.hidden_size or encoder.type_vocab_size or encoder.pooler:
        raise ValueError("Hugging Face XLM has intermediate_size = 4 * hidden_size, no segment embeddings and no pooler")
    if encoder.activation not in ("gelu", "relu"):
        raise ValueError(f"Hugging Face XLM has gelu or relu, not {encoder.activation!r}")
    return dict(
        model_type="xlm",
        vocab_size=encoder.vocab_size,
        emb_dim=encoder.hidden_size,
        n_layers=encoder.num_layers,
        n_heads=encoder.num_heads,
        gelu_activation=encoder.activation == "gelu",
        dropout=encoder.dropout_rate,
        attention_dropout=encoder.attention_dropout_rate,
        max_position_embeddings=encoder.max_positions,
        n_langs=max(encoder.num_languages, 1),
        use_lang_emb=encoder.num_languages > 1,
        layer_norm_eps=encoder.layer_norm_epsilon,
        init_std=encoder.initializer_range,
        pad_index=encoder.pad_id,
        pad_token_id=encoder.pad_id,
    )


def huggingface_config(config: ModelConfig) -> dict[str, Any]:
    """The Hugging Face `config.json` mapping of a tfbert config's encoder (an ELECTRA config's discriminator).

    SpanBERT's checkpoints are BERT checkpoints, so `spanbert` maps to `bert`.
    """
    encoder = config.encoder
    model_type = {value: key for key, value in _ARCHITECTURES.items()}.get(config.architecture)
    if config.architecture == "spanbert":
        model_type = "bert"
    if model_type is None:
        raise ValueError(f"architecture {config.architecture!r} has no Hugging Face equivalent here")
    if model_type == "xlm":
        return _xlm_huggingface_config(encoder)
    if model_type == "electra" and encoder.sharing != "none":
        raise ValueError("Hugging Face ELECTRA has no layer sharing")
    if model_type == "albert" and encoder.sharing != "all":
        raise ValueError(f"Hugging Face ALBERT shares whole layers; sharing {encoder.sharing!r} has no equivalent")
    if model_type not in ("albert", "electra") and (encoder.sharing != "none" or encoder.embedding_size != encoder.hidden_size):
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
    if model_type == "electra":
        hf.update(embedding_size=encoder.embedding_size)
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
    probe = "embeddings.weight" if architecture == "xlm" else "embeddings.word_embeddings.weight"
    name = _CHECKPOINT_PREFIX.get(architecture, architecture)
    for prefix in (f"{name}.", ""):
        if f"{prefix}{probe}" in state:
            return prefix
    raise ValueError(
        f"checkpoint has no '{name}.{probe}' or '{probe}': it is not a supported {architecture} checkpoint"
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


def _pairs(variables, specs):
    for variable, (names, fn) in zip(variables, specs):
        yield variable, names if isinstance(names, tuple) else (names,), fn


def _xlm_assignments(model: Encoder | XLMPretrainingModel, prefix: str) -> Iterator[tuple[Any, tuple[str, ...], Callable]]:
    """XLM's names: `embeddings`, `attentions.{i}.q_lin`, `layer_norm1.{i}`, `ffns.{i}.lin1`, `pred_layer.proj`."""
    encoder = model if isinstance(model, Encoder) else model.encoder
    p = prefix
    embeddings = encoder.get_layer("embeddings")
    yield embeddings.token_embedding.embeddings, (f"{p}embeddings.weight",), _identity
    yield embeddings.position_embedding.embeddings, (f"{p}position_embeddings.weight",), _identity
    if embeddings.language_embedding is not None:
        yield embeddings.language_embedding.embeddings, (f"{p}lang_embeddings.weight",), _identity
    yield from _pairs(embeddings.layer_norm.weights, _layer_norm(f"{p}layer_norm_emb"))
    for layer in range(encoder.config.num_layers):
        attention, ffn = encoder.block(layer)
        qkv = tuple(f"{p}attentions.{layer}.{n}_lin" for n in ("q", "k", "v"))
        yield from _pairs(attention.query_key_value.weights, _fused_qkv(qkv))
        yield from _pairs(attention.output_dense.weights, _dense(f"{p}attentions.{layer}.out_lin"))
        yield from _pairs(attention.layer_norm.weights, _layer_norm(f"{p}layer_norm1.{layer}"))
        yield from _pairs(ffn.intermediate.weights, _dense(f"{p}ffns.{layer}.lin1"))
        yield from _pairs(ffn.output_dense.weights, _dense(f"{p}ffns.{layer}.lin2"))
        yield from _pairs(ffn.layer_norm.weights, _layer_norm(f"{p}layer_norm2.{layer}"))
    if isinstance(model, XLMPretrainingModel):
        yield model.get_layer("lm_head").output_bias, ("pred_layer.proj.bias",), _identity


def _assignments(
    model: Encoder | PretrainingModel | XLMPretrainingModel, architecture: str, prefix: str, embeddings: bool = True
) -> Iterator[tuple[Any, tuple[str, ...], Callable]]:
    """(tfbert variable, checkpoint names, function of those arrays) for every weight of `model`.

    `embeddings=False` leaves out the embedding layer (an ELECTRA generator uses its discriminator's).
    """
    if architecture == "xlm":
        yield from _xlm_assignments(model, prefix)
        return
    encoder = model if isinstance(model, Encoder) else model.encoder
    config = encoder.config
    p = prefix
    pairs = _pairs

    if embeddings:
        yield from _embedding_assignments(encoder, prefix)
    if architecture == "electra" and config.embedding_size != config.hidden_size:
        yield from pairs(encoder.get_layer("embedding_projection").weights, _dense(f"{p}embeddings_project"))
    yield from _layer_assignments(encoder, architecture, prefix)
    if isinstance(model, PretrainingModel):
        yield from _head_assignments(model, "roberta" if architecture == "xlmr" else architecture)


def _embedding_assignments(encoder: Encoder, prefix: str) -> Iterator[tuple[Any, tuple[str, ...], Callable]]:
    p = prefix
    pairs = _pairs
    embeddings = encoder.get_layer("embeddings")
    yield embeddings.token_embedding.embeddings, (f"{p}embeddings.word_embeddings.weight",), _identity
    yield embeddings.position_embedding.embeddings, (f"{p}embeddings.position_embeddings.weight",), _identity
    if embeddings.segment_embedding is not None:
        yield embeddings.segment_embedding.embeddings, (f"{p}embeddings.token_type_embeddings.weight",), _identity
    yield from pairs(embeddings.layer_norm.weights, _layer_norm(f"{p}embeddings.LayerNorm"))


def _layer_assignments(encoder: Encoder, architecture: str, prefix: str) -> Iterator[tuple[Any, tuple[str, ...], Callable]]:
    config = encoder.config
    p = prefix
    pairs = _pairs
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
        if config.pooler:
            yield from pairs(encoder.get_layer("pooler").weights, _dense(f"{p}pooler.dense"))


def _head_assignments(model: PretrainingModel, architecture: str) -> Iterator[tuple[Any, tuple[str, ...], Callable]]:
    mlm = model.get_layer("mlm_head")
    head = {"bert": "cls.predictions.transform.", "albert": "predictions.", "roberta": "lm_head."}[architecture]
    norm = {"bert": "LayerNorm", "albert": "LayerNorm", "roberta": "layer_norm"}[architecture]
    yield from _pairs(mlm.transform.weights, _dense(f"{head}dense"))
    yield from _pairs(mlm.layer_norm.weights, _layer_norm(f"{head}{norm}"))
    bias = {"bert": "cls.predictions.bias", "albert": "predictions.bias", "roberta": "lm_head.bias"}[architecture]
    yield mlm.output_bias, (bias,), _identity
    if model.pair_objective:
        pair = {"bert": "cls.seq_relationship", "albert": "sop_classifier.classifier"}[architecture]
        yield from _pairs(model.get_layer(f"{model.pair_objective}_head").classifier.weights, _dense(pair))


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


def _copy_weights(assignments, state: Mapping[str, np.ndarray], prefix: str) -> set[str]:
    """Assigns every (variable, names, fn) from `state`; returns the names used. See `load_state_dict`."""
    used: set[str] = set()
    missing: list[str] = []
    initialised: list[str] = []
    for variable, names, fn in assignments:
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
                      stacklevel=3)
    return used


def _unused(state: Mapping[str, np.ndarray], used: set[str]) -> list[str]:
    return sorted(name for name in state if name not in used and not name.endswith(_IGNORED_SUFFIXES))


def load_state_dict(
    model: Encoder | PretrainingModel | XLMPretrainingModel, state: Mapping[str, np.ndarray], architecture: str
) -> list[str]:
    """Copies a Hugging Face state dict into `model`; returns the checkpoint names it did not use.

    Raises `ValueError` naming every missing tensor, or a tensor whose shape
    does not fit the tfbert weight. The pooler alone may be absent (RoBERTa's
    masked-LM checkpoints have none): it then keeps its initial weights, with a
    warning.
    """
    state = _with_legacy_names(dict(state))
    prefix = _prefix(state, architecture)
    return _unused(state, _copy_weights(_assignments(model, architecture, prefix), state, prefix))


def _read_config(folder: Path) -> dict[str, Any]:
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"{str(config_file)!r} does not exist: a Hugging Face checkpoint folder needs config.json")
    try:
        return json.loads(config_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{str(config_file)!r} is not valid JSON: {error}") from None


def _model_with_heads(config: ModelConfig, hf_config: Mapping[str, Any], dtype: str | None):
    if config.architecture == "electra":
        raise ValueError(
            "an ELECTRA checkpoint holds either the generator or the discriminator; load both into one "
            "pretraining model with load_electra(discriminator_folder, generator_folder), or pass heads=False"
        )
    if config.architecture == "xlm":
        return XLMPretrainingModel(config, objective="clm" if hf_config.get("causal") else "mlm", dtype=dtype)
    if config.architecture == "xlmr":
        return XLMRobertaPretrainingModel(config, dtype=dtype)
    return PretrainingModel(config, dtype=dtype)


def load_huggingface(
    folder: str | Path, heads: bool = False, dtype: str | None = None
) -> Encoder | PretrainingModel | XLMPretrainingModel:
    """Builds a tfbert model from a Hugging Face checkpoint folder and loads its weights.

    `heads=False` gives the `Encoder` (any BERT/ALBERT/RoBERTa/ELECTRA/XLM/XLM-R
    checkpoint; of ELECTRA, the generator's or the discriminator's body).
    `heads=True` gives the pretraining model with its heads, which the
    checkpoint must contain: a `PretrainingModel` (e.g. `BertForPreTraining`),
    an `XLMRobertaPretrainingModel` (`XLMRobertaForMaskedLM`) or an
    `XLMPretrainingModel` (`XLMWithLMHeadModel`; objective `clm` when the
    config is causal). ELECTRA's two checkpoints go through `load_electra`.
    """
    folder = Path(folder)
    hf_config = _read_config(folder)
    config = config_from_huggingface(hf_config)
    model = _model_with_heads(config, hf_config, dtype) if heads else Encoder(config.encoder, dtype=dtype, name="encoder")
    unused = load_state_dict(model, read_state_dict(folder), config.architecture)
    if unused:
        warnings.warn(f"{folder}: {len(unused)} checkpoint tensor(s) not used: {', '.join(unused[:10])}", stacklevel=2)
    return model


def _electra_discriminator_head(model: ElectraPretrainingModel) -> Iterator[tuple[Any, tuple[str, ...], Callable]]:
    head = model.get_layer("discriminator_head")
    yield from _pairs(head.dense.weights, _dense("discriminator_predictions.dense"))
    yield from _pairs(head.prediction.weights, _dense("discriminator_predictions.dense_prediction"))


def _electra_generator_head(model: ElectraPretrainingModel) -> Iterator[tuple[Any, tuple[str, ...], Callable]]:
    head = model.get_layer("generator_head")
    yield from _pairs(head.transform.weights, _dense("generator_predictions.dense"))
    yield from _pairs(head.layer_norm.weights, _layer_norm("generator_predictions.LayerNorm"))
    yield head.output_bias, ("generator_lm_head.bias",), _identity


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
        >>> model = load_electra("electra-small-discriminator/", "electra-small-generator/", seed=0)
    """
    folders = {"discriminator": Path(discriminator), "generator": Path(generator)}
    configs = {}
    for role, folder in folders.items():
        configs[role] = config_from_huggingface(_read_config(folder))
        if configs[role].architecture != "electra":
            raise ValueError(f"{role} checkpoint {str(folder)!r} is {configs[role].architecture!r}, not ELECTRA")
    config = ModelConfig(
        architecture="electra",
        encoder=configs["discriminator"].encoder,
        generator=configs["generator"].encoder,
        description=f"converted from Hugging Face ELECTRA {folders['discriminator'].name} + {folders['generator'].name}",
    )
    model = ElectraPretrainingModel(config, rtd_weight=rtd_weight, seed=seed, dtype=dtype)

    state = _with_legacy_names(read_state_dict(folders["discriminator"]))
    prefix = _prefix(state, "electra")
    assignments = [*_assignments(model.discriminator, "electra", prefix), *_electra_discriminator_head(model)]
    unused = {"discriminator": _unused(state, _copy_weights(assignments, state, prefix))}

    state = _with_legacy_names(read_state_dict(folders["generator"]))
    prefix = _prefix(state, "electra")
    assignments = [*_assignments(model.generator, "electra", prefix, embeddings=False), *_electra_generator_head(model)]
    used = _copy_weights(assignments, state, prefix)
    differing = []
    for variable, names, fn in _embedding_assignments(model.generator, prefix):
        if all(name in state for name in names):
            used.update(names)
            if not np.allclose(fn(*(state[name] for name in names)), variable.numpy(), atol=1e-6):
                differing.extend(names)
    if differing:
        warnings.warn(
            f"{folders['generator']}: the generator's embeddings differ from the discriminator's "
            f"({', '.join(differing)}); tfbert's ELECTRA shares one set and keeps the discriminator's",
            stacklevel=2,
        )
    unused["generator"] = _unused(state, used)
    for role, names in unused.items():
        if names:
            warnings.warn(f"{folders[role]}: {len(names)} checkpoint tensor(s) not used: {', '.join(names[:10])}", stacklevel=2)
    return model
