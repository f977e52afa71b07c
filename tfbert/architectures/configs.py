"""The registered families' shipped configs: `<package>/configs/NAME.yaml` in each family's package.

A family's configs live beside its spec (`ArchitectureSpec.package`), as keras-hub keeps presets
beside the model; `tfbert configs` and `tfbert.config.load_config("NAME")` find them here.

Example:
    >>> shipped_configs()["roberta_tiny"].family
    'roberta'
    >>> shipped_configs()["roberta_tiny"].source
    'tfbert/families/roberta/configs/roberta_tiny.yaml'
"""

from __future__ import annotations

import dataclasses
import importlib.resources
from importlib.resources.abc import Traversable

from tfbert.architectures import registry

FOLDER = "configs"


@dataclasses.dataclass(frozen=True)
class ShippedConfig:
    """One shipped config: its family, its file (a package resource) and that file's path inside the package tree."""

    family: str
    file: Traversable
    source: str


def shipped_configs() -> dict[str, ShippedConfig]:
    """Every registered family's configs by name, sorted; `ValueError` when two families ship one name."""
    found: dict[str, ShippedConfig] = {}
    for family in registry.names():
        package = registry.get(family).package
        folder = importlib.resources.files(package) / FOLDER if package else None
        if folder is None or not folder.is_dir():
            continue
        for entry in folder.iterdir():
            name = entry.name.removesuffix(".yaml")
            if name == entry.name:
                continue
            if name in found:
                raise ValueError(f"config {name!r} is shipped by two families, {found[name].family} "
                                 f"({found[name].source}) and {family}; rename one of them")
            found[name] = ShippedConfig(family, entry, f"{package.replace('.', '/')}/{FOLDER}/{entry.name}")
    return dict(sorted(found.items()))
