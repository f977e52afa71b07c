"""Which backend a run trains on (placeholder: the install helper writes the full module).

    >>> resolve_backend("tensorflow")
    'tensorflow'
"""

from __future__ import annotations

import importlib.util
import os


def resolve_backend(requested: str = "auto") -> str:
    """`tensorflow` or `jax`: `requested`, or for `auto` `KERAS_BACKEND` where it names one, else tensorflow."""
    if requested == "jax" and importlib.util.find_spec("jax") is None:
        raise ValueError('--backend jax needs JAX: pip install "jax[tpu]" (TPU) or pip install jax')
    if requested != "auto":
        return requested
    variable = os.environ.get("KERAS_BACKEND")
    return variable if variable in ("tensorflow", "jax") else "tensorflow"
