"""The registry of architecture families: `register`, `get`, `names`, `unregister`, format look-ups.

Example:
    >>> from tfbert import architectures
    >>> architectures.names()[:3]
    ('bert', 'albert', 'roberta')
    >>> architectures.get("gpt")
    Traceback (most recent call last):
    ValueError: unknown architecture 'gpt'; known: bert, albert, roberta, electra, spanbert, xlm, xlmr, deberta
"""

from __future__ import annotations

import importlib

from tfbert.architectures.spec import ArchitectureSpec

# The built-in families, in the order `names()` lists them: `tfbert.families.<name>.spec` holds each `SPEC`.
BUILT_IN = ("bert", "albert", "roberta", "electra", "spanbert", "xlm", "xlmr", "deberta")
_SPECS: dict[str, ArchitectureSpec] = {}


def _specs() -> dict[str, ArchitectureSpec]:
    """The registered specs, the built-in families' imported on first use.

    Imported here, not when this package is, so that a family's `spec` module may import
    `tfbert.architectures.spec` without a cycle at run time.
    """
    if not _SPECS:
        for name in BUILT_IN:
            _SPECS[name] = importlib.import_module(f"tfbert.families.{name}.spec").SPEC
    return _SPECS


def register(spec: ArchitectureSpec, *, replace: bool = False) -> ArchitectureSpec:
    """Adds `spec` under `spec.name` (a `ValueError` if the name is taken, unless `replace`); returns it."""
    if not isinstance(spec, ArchitectureSpec):
        raise TypeError(f"register takes an ArchitectureSpec, got {type(spec).__name__}")
    if spec.name in _specs() and not replace:
        raise ValueError(f"architecture {spec.name!r} is already registered; pass replace=True to replace it")
    _SPECS[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Removes the family `name` (tests that register a throwaway family call this when done)."""
    get(name)
    del _SPECS[name]


def get(name: str) -> ArchitectureSpec:
    """The spec of architecture `name`; `ValueError` listing the known names for any other."""
    try:
        return _specs()[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown architecture {name!r}; known: {', '.join(_specs())}") from None


def names() -> tuple[str, ...]:
    """Every registered architecture, in registration order (the built-in families first)."""
    return tuple(_specs())


def with_format(format_name: str, model_type: str) -> ArchitectureSpec:
    """The family whose `format_name` checkpoints have this `model_type` (e.g. Hugging Face `xlm-roberta`).

    Example:
        >>> with_format("huggingface", "xlm-roberta").name
        'xlmr'
    """
    for spec in _specs().values():
        entry = spec.formats.get(format_name)
        if entry is not None and entry.reads and entry.model_type == model_type:
            return spec
    raise ValueError(f"{format_name} model_type {model_type!r} is not supported; supported: "
                     f"{', '.join(model_types(format_name))}")


def model_types(format_name: str) -> tuple[str, ...]:
    """The `model_type`s of `format_name` checkpoints that load as some registered family."""
    return tuple(spec.formats[format_name].model_type for spec in _specs().values()
                 if format_name in spec.formats and spec.formats[format_name].reads)

