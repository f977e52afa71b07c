"""The activation functions that encoder configs may name."""

from typing import Callable

from keras import ops

from tfbert.config import ACTIVATIONS


def _gelu_exact(x):
    return ops.gelu(x, approximate=False)


def _gelu_tanh(x):
    return ops.gelu(x, approximate=True)


# The function of each name in tfbert.config.ACTIVATIONS (the one list configs are checked against).
_ACTIVATIONS: dict[str, Callable] = {
    "gelu": _gelu_exact,
    "gelu_new": _gelu_tanh,
    "relu": ops.relu,
    "silu": ops.silu,
    "tanh": ops.tanh,
}


def get_activation(name: str) -> Callable:
    """The function for a config's `activation` name (`gelu` is exact, `gelu_new` the tanh form)."""
    try:
        return _ACTIVATIONS[name]
    except KeyError:
        raise ValueError(f"unknown activation {name!r}; allowed: {', '.join(ACTIVATIONS)}") from None
