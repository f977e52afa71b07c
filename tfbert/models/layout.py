"""Model-parallel layouts: a family's `ArchitectureSpec.layout` rules as a `keras.distribution` for `--mesh DATAxMODEL`.

On the JAX backend Keras lays each variable out on a device mesh when it is made, by the first
`LayoutMap` rule whose regex matches the variable's path in full (unmatched variables are
replicated); XLA's SPMD partitioner then splits the computation to match. `keras_distribution`
picks data parallelism over every device, or a `DATA x MODEL` mesh whose `model` axis splits the
variables the family's rules name (docs/distributed.md).

Example:
    >>> from tfbert import architectures
    >>> distribution = keras_distribution(None, architectures.get("bert"))
    >>> type(distribution).__name__
    'DataParallel'
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

import keras

from tfbert.architectures.spec import ArchitectureSpec

# The device mesh's axes: batches split on the first, variables on the second (`ArchitectureSpec.layout`).
MESH_AXES = ("data", "model")
MESH_FORMAT = re.compile(r"(\d+)x(\d+)")


def layout_map(spec: ArchitectureSpec, device_mesh: keras.distribution.DeviceMesh) -> keras.distribution.LayoutMap:
    """The family's layout rules on `device_mesh` (whose axes are `MESH_AXES`).

    Example:
        >>> from tfbert import architectures
        >>> mesh = keras.distribution.DeviceMesh((1, 1), MESH_AXES, keras.distribution.list_devices()[:1])
        >>> layouts = layout_map(architectures.get("bert"), mesh)
        >>> layouts["layer3_attention/output/kernel"].axes
        ('model', None)
    """
    layouts = keras.distribution.LayoutMap(device_mesh)
    for pattern, axes in spec.layout:
        layouts[pattern] = axes
    return layouts


def parse_mesh(mesh: str | tuple[int, int]) -> tuple[int, int]:
    """`"2x4"` or `(2, 4)` as `(data, model)`; `ValueError` naming `--mesh` for anything else.

    Example:
        >>> parse_mesh("2x4")
        (2, 4)
    """
    if isinstance(mesh, str):
        matched = MESH_FORMAT.fullmatch(mesh.strip())
        sizes = (int(matched[1]), int(matched[2])) if matched else None
    elif isinstance(mesh, (tuple, list)) and len(mesh) == 2 and all(isinstance(size, int) for size in mesh):
        sizes = tuple(mesh)
    else:
        sizes = None
    if sizes is None or min(sizes) < 1:
        raise ValueError(f"--mesh {mesh!r}: expected DATAxMODEL, two positive whole numbers such as 2x4 (data "
                         "parallel replicas x devices each model is split over)")
    return sizes


def keras_distribution(mesh: str | tuple[int, int] | None, spec: ArchitectureSpec,
                       devices: Sequence | None = None) -> keras.distribution.Distribution:
    """`DataParallel` over `devices` (default: every device) for no mesh or a model axis of 1, else `ModelParallel`
    on a `DATA x MODEL` mesh with `spec`'s layout; `ValueError` naming `--mesh` when `DATA * MODEL` is not the
    number of devices.

    Example:
        >>> from tfbert import architectures
        >>> keras_distribution("1x3", architectures.get("bert"), devices=["cpu:0"])
        Traceback (most recent call last):
        ...
        ValueError: --mesh '1x3': 1 x 3 = 3 devices, but there is 1 (cpu:0); give a mesh whose DATA x MODEL is 1
    """
    devices = list(devices) if devices is not None else keras.distribution.list_devices()
    if mesh is None:
        return keras.distribution.DataParallel(devices=devices)
    data, model = parse_mesh(mesh)
    if data * model != len(devices):
        there = "there is 1" if len(devices) == 1 else f"there are {len(devices)}"
        raise ValueError(f"--mesh {mesh!r}: {data} x {model} = {data * model} devices, but {there} "
                         f"({', '.join(map(str, devices[:4]))}{', ...' if len(devices) > 4 else ''}); give a mesh "
                         f"whose DATA x MODEL is {len(devices)}")
    if model == 1:
        return keras.distribution.DataParallel(devices=devices)
    device_mesh = keras.distribution.DeviceMesh((data, model), MESH_AXES, devices)
    return keras.distribution.ModelParallel(layout_map=layout_map(spec, device_mesh), batch_dim_name=MESH_AXES[0])


def rule_matches(spec: ArchitectureSpec, paths: Iterable[str]) -> dict[str, list[str]]:
    """Each of `spec`'s layout rules and the variable `paths` it matches (as `LayoutMap` does: the whole path).

    A rule that matches nothing has rotted (a variable was renamed); a path under two rules makes Keras raise.

    Example:
        >>> from tfbert import architectures
        >>> rule_matches(architectures.get("bert"), ["layer0_attention/output/kernel"])[".*_attention/output/kernel"]
        ['layer0_attention/output/kernel']
    """
    paths = list(paths)
    return {pattern: [path for path in paths if re.fullmatch(pattern, path)] for pattern, _ in spec.layout}
