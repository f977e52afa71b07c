"""Weight-name layouts that checkpoint formats share: dense, LayerNorm, fused QKV, a BERT-style block.

Each helper yields assignments `(tfbert variable, checkpoint names, function of those arrays)`;
a family's weight-name map (in `tfbert/architectures/<family>.py`) is a chain of them, and the
converters copy every assignment from a state dict. PyTorch stores dense kernels as
`[out, in]`, Keras as `[in, out]`, hence the transposes. Only NumPy is imported here.

Example:
    >>> list(dense(encoder.get_layer("pooler"), "bert.pooler.dense"))
    [(<kernel>, ('bert.pooler.dense.weight',), transpose), (<bias>, ('bert.pooler.dense.bias',), identity)]
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

if TYPE_CHECKING:
    from tfbert.architectures.spec import Assignment


def identity(array: np.ndarray) -> np.ndarray:
    return array


def transpose(array: np.ndarray) -> np.ndarray:
    return array.T


def fuse_kernels(*kernels: np.ndarray) -> np.ndarray:
    """PyTorch's separate `[out, in]` query, key and value kernels as tfbert's one `[in, 3 * out]`."""
    return np.concatenate([kernel.T for kernel in kernels], axis=1)


def fuse_biases(*biases: np.ndarray) -> np.ndarray:
    return np.concatenate(biases, axis=0)


def tensor(variable: Any, name: str) -> Iterator[Assignment]:
    """One variable copied as is (embedding tables, output biases)."""
    yield variable, (name,), identity


def dense(layer: Any, name: str) -> Iterator[Assignment]:
    """A Keras `Dense` from `name.weight` (transposed) and `name.bias`."""
    kernel, bias = layer.weights
    yield kernel, (f"{name}.weight",), transpose
    yield bias, (f"{name}.bias",), identity


def layer_norm(layer: Any, name: str) -> Iterator[Assignment]:
    """A Keras `LayerNormalization` from `name.weight` (gamma) and `name.bias` (beta)."""
    gamma, beta = layer.weights
    yield gamma, (f"{name}.weight",), identity
    yield beta, (f"{name}.bias",), identity


def fused_qkv(layer: Any, names: tuple[str, str, str]) -> Iterator[Assignment]:
    """tfbert's fused `query_key_value` Dense from three separate query, key and value projections."""
    kernel, bias = layer.weights
    yield kernel, tuple(f"{name}.weight" for name in names), fuse_kernels
    yield bias, tuple(f"{name}.bias" for name in names), fuse_biases


@dataclasses.dataclass(frozen=True)
class BlockNames:
    """The checkpoint names of one post-LN transformer block's eight parameter groups.

    Example:
        >>> BlockNames.bert("bert.encoder.layer.0.").query
        'bert.encoder.layer.0.attention.self.query'
    """

    query: str
    key: str
    value: str
    attention_output: str
    attention_norm: str
    intermediate: str
    output: str
    output_norm: str

    @classmethod
    def bert(cls, base: str) -> "BlockNames":
        """Hugging Face BERT's names under `base` (`bert.encoder.layer.3.`), shared by most families."""
        return cls(f"{base}attention.self.query", f"{base}attention.self.key", f"{base}attention.self.value",
                   f"{base}attention.output.dense", f"{base}attention.output.LayerNorm",
                   f"{base}intermediate.dense", f"{base}output.dense", f"{base}output.LayerNorm")


def block(attention: Any, feed_forward: Any, names: BlockNames) -> Iterator[Assignment]:
    """Every weight of a tfbert attention + feed-forward block (`Encoder.block(layer)`) under `names`."""
    yield from fused_qkv(attention.query_key_value, (names.query, names.key, names.value))
    yield from dense(attention.output_dense, names.attention_output)
    yield from layer_norm(attention.layer_norm, names.attention_norm)
    yield from dense(feed_forward.intermediate, names.intermediate)
    yield from dense(feed_forward.output_dense, names.output)
    yield from layer_norm(feed_forward.layer_norm, names.output_norm)


def masked_lm_head(head: Any, transform: str, norm: str, bias: str) -> Iterator[Assignment]:
    """A `MaskedLMHead`: its dense transform, LayerNorm and output bias (the decoder is the tied table)."""
    yield from dense(head.transform, transform)
    yield from layer_norm(head.layer_norm, norm)
    yield from tensor(head.output_bias, bias)
