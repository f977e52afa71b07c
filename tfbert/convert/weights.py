"""Weight-name layouts that checkpoint formats share: dense, LayerNorm, fused QKV, a BERT-style block, a whole encoder.

Each helper yields assignments `(tfbert variable, checkpoint names, function of those arrays)`;
`EncoderNames` composes them into every weight of an encoder from the names one format gives them,
so a family's weight-name map (in `tfbert/families/<family>/formats.py`) declares names only, and
the converters copy every assignment from a mapping of checkpoint names to arrays (`copy_weights`).
A `Layout` says how one format names and stores a dense layer and a LayerNorm: PyTorch stores
dense kernels as `[out, in]` (`name.weight`, transposed here), TensorFlow as `[in, out]`
(`name/kernel`, LayerNorm `gamma`/`beta`), keras-hub's attention projections with a heads axis
(`[in, heads, size]`, `[heads, size, out]`). Only NumPy is imported here.

Example:
    >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
    >>> encoder = load_pretrained_encoder("runs/bert")
    >>> [(variable.path, names) for variable, names, _ in dense(encoder.get_layer("pooler"), "bert.pooler.dense")]
    [('pooler/kernel', ('bert.pooler.dense.weight',)), ('pooler/bias', ('bert.pooler.dense.bias',))]
    >>> [names for _, names, _ in dense(encoder.get_layer("pooler"), "bert/pooler/dense", TENSORFLOW)]
    [('bert/pooler/dense/kernel',), ('bert/pooler/dense/bias',)]
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

import numpy as np

if TYPE_CHECKING:
    from tfbert.architectures.spec import Assignment


def identity(array: np.ndarray) -> np.ndarray:
    return array


def transpose(array: np.ndarray) -> np.ndarray:
    return array.T


def merge_trailing_axes(array: np.ndarray) -> np.ndarray:
    """`[in, heads, size]` (a keras-hub query/key/value kernel) as `[in, heads * size]`; 2-D arrays as they are."""
    return array.reshape(array.shape[0], -1)


def merge_leading_axes(array: np.ndarray) -> np.ndarray:
    """`[heads, size, out]` (a keras-hub attention output kernel) as `[heads * size, out]`; 2-D arrays as they are."""
    return array.reshape(-1, array.shape[-1])


@dataclasses.dataclass(frozen=True)
class Layout:
    """How a checkpoint format names and stores a dense layer and a LayerNorm.

    Attributes:
        separator: between a scope and a parameter name (`.` in PyTorch, `/` in TensorFlow).
        kernel, gamma, beta: the parameter names of a dense kernel and a LayerNorm's scale and offset.
        bias: the parameter name of a dense bias (`bias` but in Google's output layers).
        kernel_fn: a stored dense kernel as Keras's `[in, out]` matrix.
        output_kernel_fn: the same for an attention output projection (whose input axis keras-hub
            splits into heads).

    Example:
        >>> TENSORFLOW.name("bert/pooler/dense", TENSORFLOW.kernel)
        'bert/pooler/dense/kernel'
    """

    separator: str
    kernel: str
    gamma: str
    beta: str
    kernel_fn: Callable[[np.ndarray], np.ndarray]
    output_kernel_fn: Callable[[np.ndarray], np.ndarray]
    bias: str = "bias"

    def name(self, scope: str, parameter: str) -> str:
        return f"{scope}{self.separator}{parameter}"

    def fuse_kernels(self, *kernels: np.ndarray) -> np.ndarray:
        """Separate query, key and value kernels as tfbert's one `[in, 3 * out]`."""
        return np.concatenate([self.kernel_fn(kernel) for kernel in kernels], axis=1)


# Hugging Face `transformers` state dicts: `name.weight` [out, in], `name.bias`, LayerNorm `weight`/`bias`.
PYTORCH = Layout(".", "weight", "weight", "bias", transpose, transpose)
# TensorFlow 1 checkpoints (Google's BERT, ALBERT, ELECTRA): `name/kernel` [in, out], LayerNorm `gamma`/`beta`.
TENSORFLOW = Layout("/", "kernel", "gamma", "beta", identity, identity)
# keras-hub backbones' variable paths: as TensorFlow's, with per-head attention kernels.
KERAS_HUB = Layout("/", "kernel", "gamma", "beta", merge_trailing_axes, merge_leading_axes)
# The output layers of Google's TF1 heads (BERT's NSP classifier): `output_weights` [classes, in], `output_bias`.
TENSORFLOW_OUTPUT = Layout("/", "output_weights", "gamma", "beta", transpose, transpose, "output_bias")


def fuse_kernels(*kernels: np.ndarray) -> np.ndarray:
    """PyTorch's separate `[out, in]` query, key and value kernels as tfbert's one `[in, 3 * out]`."""
    return PYTORCH.fuse_kernels(*kernels)


def fuse_biases(*biases: np.ndarray) -> np.ndarray:
    """Query, key and value biases (flat, or keras-hub's `[heads, size]`) as one `[3 * out]`."""
    return np.concatenate([bias.reshape(-1) for bias in biases], axis=0)


def tensor(variable: Any, name: str, fn: Callable[[np.ndarray], np.ndarray] = identity) -> Iterator[Assignment]:
    """One variable copied as is (embedding tables, output biases), or through `fn`."""
    yield variable, (name,), fn


def zeros(variable: Any) -> Iterator[Assignment]:
    """A variable the checkpoint has no tensor for and that must be zero (a segment table a format lacks)."""
    yield variable, (), lambda: np.zeros(tuple(variable.shape), dtype=np.float32)


def dense(layer: Any, name: str, layout: Layout = PYTORCH, kernel_fn: Callable | None = None) -> Iterator[Assignment]:
    """A Keras `Dense` from `name`'s kernel (as `layout` stores it, or through `kernel_fn`) and bias."""
    kernel, bias = layer.weights
    yield kernel, (layout.name(name, layout.kernel),), kernel_fn or layout.kernel_fn
    yield bias, (layout.name(name, layout.bias),), identity


def layer_norm(layer: Any, name: str, layout: Layout = PYTORCH) -> Iterator[Assignment]:
    """A Keras `LayerNormalization` from `name`'s scale (gamma) and offset (beta)."""
    gamma, beta = layer.weights
    yield gamma, (layout.name(name, layout.gamma),), identity
    yield beta, (layout.name(name, layout.beta),), identity


def fused_qkv(layer: Any, names: tuple[str, str, str], layout: Layout = PYTORCH) -> Iterator[Assignment]:
    """tfbert's fused `query_key_value` Dense from three separate query, key and value projections."""
    kernel, bias = layer.weights
    yield kernel, tuple(layout.name(name, layout.kernel) for name in names), layout.fuse_kernels
    yield bias, tuple(layout.name(name, layout.bias) for name in names), fuse_biases


@dataclasses.dataclass(frozen=True)
class BlockNames:
    """The checkpoint names of one post-LN transformer block's parameter groups.

    As a format declares them they are templates, filled by `at` with the block's place: `{layer}`,
    or `{group}` and `{inner}` in ALBERT's shared layouts. `position_query` and `position_key` name
    DeBERTa's separate relative-position projections (None: the format has none).

    Example:
        >>> BlockNames.bert("bert.encoder.layer.0.").query
        'bert.encoder.layer.0.attention.self.query'
        >>> BlockNames.bert("encoder/layer_{layer}/", "/").at("bert/", layer=3).output_norm
        'bert/encoder/layer_3/output/LayerNorm'
    """

    query: str
    key: str
    value: str
    attention_output: str
    attention_norm: str
    intermediate: str
    output: str
    output_norm: str
    position_query: str | None = None
    position_key: str | None = None

    @classmethod
    def bert(cls, base: str, separator: str = ".") -> "BlockNames":
        """BERT's names under `base` (`bert.encoder.layer.3.`; with `/`, Google's `bert/encoder/layer_3/`),
        shared by most families."""
        def name(*parts: str) -> str:
            return base + separator.join(parts)

        return cls(name("attention", "self", "query"), name("attention", "self", "key"),
                   name("attention", "self", "value"), name("attention", "output", "dense"),
                   name("attention", "output", "LayerNorm"), name("intermediate", "dense"),
                   name("output", "dense"), name("output", "LayerNorm"))

    def at(self, prefix: str, **place: int) -> "BlockNames":
        """The names of the block at `place` (`layer=3`, or `group=0, inner=1`) under `prefix`."""
        templates = dataclasses.asdict(self)
        return BlockNames(**{name: None if template is None else prefix + template.format(**place)
                             for name, template in templates.items()})


def block(attention: Any, feed_forward: Any, names: BlockNames, layout: Layout = PYTORCH) -> Iterator[Assignment]:
    """Every weight of a tfbert attention + feed-forward block (`Encoder.block(layer)`) under `names`."""
    yield from fused_qkv(attention.query_key_value, (names.query, names.key, names.value), layout)
    yield from dense(attention.output_dense, names.attention_output, layout, layout.output_kernel_fn)
    yield from layer_norm(attention.layer_norm, names.attention_norm, layout)
    yield from dense(feed_forward.intermediate, names.intermediate, layout)
    yield from dense(feed_forward.output_dense, names.output, layout)
    yield from layer_norm(feed_forward.layer_norm, names.output_norm, layout)
    if names.position_query is not None and attention.position_query is not None:
        yield from dense(attention.position_query, names.position_query, layout)
        yield from dense(attention.position_key, names.position_key, layout)


# An `EmbeddingNames` table the format lacks but tfbert's encoder has, and whose rows must then be zero.
ZERO = "<zero>"


@dataclasses.dataclass(frozen=True)
class EmbeddingNames:
    """The checkpoint names of an encoder's embedding tables and their LayerNorm, under a prefix.

    A table named None is one the format does not hold (it is left out); `ZERO` one it does not hold
    and tfbert's must be zero (keras-hub RoBERTa's segment row). `position_fn` maps the stored
    position table to tfbert's.

    Example:
        >>> EmbeddingNames("embeddings.weight", "layer_norm_emb", position="position_embeddings.weight").position
        'position_embeddings.weight'
    """

    token: str
    norm: str
    position: str | None = None
    segment: str | None = None
    language: str | None = None
    position_fn: Callable[[np.ndarray], np.ndarray] = identity

    def assignments(self, embeddings: Any, prefix: str, layout: Layout) -> Iterator[Assignment]:
        """Every weight of tfbert's `TextEmbeddings` layer `embeddings`, in the order token, position, segment,
        language, LayerNorm."""
        tables = ((embeddings.token_embedding, self.token, identity),
                  (embeddings.position_embedding, self.position, self.position_fn),
                  (embeddings.segment_embedding, self.segment, identity),
                  (embeddings.language_embedding, self.language, identity))
        for table, name, fn in tables:
            if table is not None and name == ZERO:
                yield from zeros(table.embeddings)
            elif table is not None and name is not None:
                yield from tensor(table.embeddings, prefix + name, fn)
        yield from layer_norm(embeddings.layer_norm, prefix + self.norm, layout)


@dataclasses.dataclass(frozen=True)
class EncoderNames:
    """How one checkpoint format names every weight of a tfbert encoder: a family's `encoder_weights`.

    Called as `names(encoder, prefix, embeddings=True)`, it lists the embeddings (unless
    `embeddings` is false), the embedding projection, the relative-position table, one block per
    layer (per group and inner layer when `shared`, ALBERT's layouts) and the pooler, each named
    under `prefix` as the format does. A part the encoder lacks, or the format does not name (None),
    is left out.

    Attributes:
        layout: how the format stores dense layers and LayerNorms.
        embeddings: the embedding tables' names.
        blocks: one block's names as templates (see `BlockNames.at`).
        projection: the E -> H embedding projection's scope.
        relative: the relative-position table's name and its LayerNorm's scope (DeBERTa's).
        pooler: the pooler's scope.
        shared: one block per ALBERT group and inner layer instead of one per layer.

    Example:
        >>> from tfbert.families.bert import formats as bert
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
        >>> encoder = load_pretrained_encoder("runs/bert")
        >>> [names for _, names, _ in bert.TF1_NAMES(encoder, "bert/")][-1]
        ('bert/pooler/dense/bias',)
    """

    layout: Layout
    embeddings: EmbeddingNames
    blocks: BlockNames
    projection: str | None = None
    relative: tuple[str, str] | None = None
    pooler: str | None = None
    shared: bool = False

    def __call__(self, encoder: Any, prefix: str, embeddings: bool = True) -> Iterator[Assignment]:
        stem = encoder.stem()
        if embeddings:
            yield from self.embedding_weights(encoder, prefix)
        if self.projection is not None and stem["projection"] is not None:
            yield from dense(stem["projection"], prefix + self.projection, self.layout)
        if self.relative is not None and stem["relative"] is not None:
            yield from tensor(stem["relative"].embeddings.embeddings, prefix + self.relative[0])
            yield from layer_norm(stem["relative"].layer_norm, prefix + self.relative[1], self.layout)
        for place, attention, feed_forward in (_shared_blocks(encoder) if self.shared else _layers(encoder)):
            yield from block(attention, feed_forward, self.blocks.at(prefix, **place), self.layout)
        if self.pooler is not None and encoder.config.pooler:
            yield from dense(encoder.get_layer("pooler"), prefix + self.pooler, self.layout)

    def embedding_weights(self, encoder: Any, prefix: str) -> Iterator[Assignment]:
        """The embedding tables and their LayerNorm alone (ELECTRA's generator shares them)."""
        yield from self.embeddings.assignments(encoder.get_layer("embeddings"), prefix, self.layout)


def _layers(encoder: Any) -> Iterator[tuple[dict[str, int], Any, Any]]:
    for layer in range(encoder.config.num_layers):
        yield ({"layer": layer}, *encoder.block(layer))


def _shared_blocks(encoder: Any) -> Iterator[tuple[dict[str, int], Any, Any]]:
    """`({group, inner}, attention, feed_forward)` for every shared block of an ALBERT encoder."""
    config = encoder.config
    for group in range(config.num_hidden_groups):
        layer = next(i for i in range(config.num_layers) if config.group_of_layer(i) == group)
        for inner in range(config.inner_group_num):
            yield ({"group": group, "inner": inner}, *encoder.block(layer, inner))


def masked_lm_head(head: Any, transform: str, norm: str, bias: str, layout: Layout = PYTORCH) -> Iterator[Assignment]:
    """A `MaskedLMHead`: its dense transform, LayerNorm and output bias (the decoder is the tied table)."""
    yield from dense(head.transform, transform, layout)
    yield from layer_norm(head.layer_norm, norm, layout)
    yield from tensor(head.output_bias, bias)


@dataclasses.dataclass(frozen=True)
class HeadNames:
    """How one checkpoint format names a `PretrainingModel`'s heads: a family's `head_weights`.

    Called as `names(model)`, it lists the masked-LM head (`mlm_head`: `transform`, `norm`, the
    output `bias`) and, when the model trains one and the format names it (`pair`), the NSP / SOP
    classifier (`{objective}_head`), stored as `pair_layout` says.

    Example:
        >>> HeadNames("lm_head.dense", "lm_head.layer_norm", "lm_head.bias").pair is None
        True
    """

    transform: str
    norm: str
    bias: str
    pair: str | None = None
    layout: Layout = PYTORCH
    pair_layout: Layout = PYTORCH

    def __call__(self, model: Any) -> Iterator[Assignment]:
        yield from masked_lm_head(model.get_layer("mlm_head"), self.transform, self.norm, self.bias, self.layout)
        if self.pair is not None and model.pair_objective:
            classifier = model.get_layer(f"{model.pair_objective}_head").classifier
            yield from dense(classifier, self.pair, self.pair_layout)


def copy_weights(assignments: Iterable[Assignment], tensors: Mapping[str, np.ndarray], source: str,
                 config: str = "the config", is_pooler: Callable[[str], bool] = lambda name: False) -> set[str]:
    """Assigns every `(variable, names, fn)` from `tensors`; returns the checkpoint names it used.

    Raises `ValueError` naming every missing tensor, or a tensor whose shape does not fit its
    tfbert weight (`source` names the checkpoint, `config` the file the shapes came from). A
    pooler (`is_pooler(first name)`) may be absent: it keeps its initial weights, with a warning.

    Example:
        >>> from safetensors.numpy import load_file
        >>> from tfbert.families.bert import formats as bert
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
        >>> encoder = load_pretrained_encoder("all-MiniLM-L6-v2/")
        >>> state = load_file("all-MiniLM-L6-v2/model.safetensors")
        >>> used = copy_weights(bert.HUGGINGFACE_NAMES(encoder, ""), state, "checkpoint minilm/", "config.json")
        >>> len(used), len(state)
        (103, 104)
    """
    used: set[str] = set()
    missing: list[str] = []
    initialised: list[str] = []
    for variable, names, fn in assignments:
        absent = [name for name in names if name not in tensors]
        if absent:
            (initialised if is_pooler(names[0]) else missing).extend(absent)
            continue
        value = np.asarray(fn(*(tensors[name] for name in names)))
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(
                f"{source}: tensor(s) {', '.join(names)} give shape {tuple(value.shape)}, but {config} makes tfbert "
                f"weight {variable.path} {tuple(variable.shape)}; the config does not match the weights"
            )
        variable.assign(value)
        used.update(names)
    if missing:
        raise ValueError(f"{source} is missing {len(missing)} tensor(s) the model needs: {', '.join(missing[:10])}")
    if initialised:
        warnings.warn(f"{source} has no pooler ({', '.join(initialised)}); the pooler keeps its initial weights",
                      stacklevel=3)
    return used


def _split_kernels(value: np.ndarray, count: int) -> list[np.ndarray]:
    return [part.T for part in np.split(value, count, axis=1)]


# How a PyTorch-layout assignment's function is undone: (variable value, number of names) -> one array per name.
_PYTORCH_INVERSES: dict[Callable, Callable[[np.ndarray, int], list[np.ndarray]]] = {
    identity: lambda value, count: [value],
    transpose: lambda value, count: [value.T],
    fuse_biases: lambda value, count: np.split(value, count),
    PYTORCH.fuse_kernels: _split_kernels,
}


def export_weights(assignments: Iterable[Assignment], dtype: Any = None) -> dict[str, np.ndarray]:
    """The checkpoint tensors that `assignments` (a PyTorch-layout weight-name map) read, from the variables'
    values: the map run in reverse, so that loading the result with `copy_weights` gives the same variables.

    Transposes and splits are exact, so a state dict loaded and exported again is equal bit for bit.
    Assignments without names (tables a format lacks) are skipped. `dtype` casts floating tensors.

    Example:
        >>> from tfbert.families.bert import formats as bert
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
        >>> encoder = load_pretrained_encoder("runs/bert")
        >>> export_weights(bert.HUGGINGFACE_NAMES(encoder, "bert."))["bert.pooler.dense.weight"].shape
        (128, 128)
    """
    tensors: dict[str, np.ndarray] = {}
    for variable, names, fn in assignments:
        if not names:
            continue
        if fn not in _PYTORCH_INVERSES:
            raise ValueError(f"weight {variable.path}: its map ({getattr(fn, '__name__', fn)}) has no inverse for "
                             "PyTorch checkpoints")
        value = np.asarray(variable.numpy() if hasattr(variable, "numpy") else variable)
        for name, part in zip(names, _PYTORCH_INVERSES[fn](value, len(names))):
            part = np.ascontiguousarray(part)
            tensors[name] = part.astype(dtype) if dtype is not None and part.dtype.kind == "f" else part
    return tensors
