"""Device layouts of a family's variables for `keras.distribution` (placeholder: data parallel only).

Example:
    >>> keras_distribution(None, None)  # doctest: +SKIP
"""

from __future__ import annotations

import keras


def keras_distribution(mesh: str | None, spec=None, devices=None) -> keras.distribution.Distribution:
    """Data parallel over every device (`mesh` None)."""
    if mesh is not None:
        raise ValueError(f"--mesh {mesh}: model parallelism is not available yet")
    return keras.distribution.DataParallel(devices=devices or keras.distribution.list_devices())
