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
from typing import Callable

from tfbert.architectures.spec import ArchitectureSpec

# The built-in families, in the order `names()` lists them: `tfbert.families.<name>.spec` holds each `SPEC`.
BUILT_IN = ("bert", "albert", "roberta", "electra", "spanbert", "xlm", "xlmr", "deberta")
# The entry-point group where an installed distribution names its families' specs (`outfam = outfam.spec:SPEC`).
ENTRY_POINTS = "tfbert.families"
_SPECS: dict[str, ArchitectureSpec] = {}
_WATCHERS: list[Callable[[ArchitectureSpec], None]] = []
_loaded = False


def _specs() -> dict[str, ArchitectureSpec]:
    """The registered specs: the built-in families' and the installed ones' (entry points), imported on first use.

    Imported here, not when this package is, so that a family's `spec` module may import
    `tfbert.architectures.spec` without a cycle at run time, and `import tfbert` reads no entry points.
    """
    global _loaded
    if not _loaded:
        _loaded = True   # first: a family module that calls `register` while it loads finds the registry as it stands
        try:
            for name in BUILT_IN:
                _add(importlib.import_module(f"tfbert.families.{name}.spec").SPEC)
            for spec in installed_families():
                _add(spec)
        except BaseException:
            _loaded = False
            raise
    return _SPECS


def installed_families() -> list[ArchitectureSpec]:
    """The specs that installed distributions name in the entry-point group `tfbert.families`.

    An entry point `name = module:SPEC` must name an `ArchitectureSpec` called `name`; anything else
    raises an error naming the entry point and its distribution.

    Example (a distribution's `pyproject.toml`):

        [project.entry-points."tfbert.families"]
        outfam = "outfam.spec:SPEC"
    """
    import importlib.metadata   # here, not at the top: reading entry points is for the registry's first use

    found = []
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
        where = (f"entry point {entry.name} = {entry.value} (group {ENTRY_POINTS}, distribution "
                 f"{entry.dist.name if entry.dist else 'unknown'})")
        try:
            spec = entry.load()
        except Exception as error:
            raise ImportError(f"tfbert family {where} does not load: {type(error).__name__}: {error}; fix or "
                              "uninstall that distribution") from error
        if not isinstance(spec, ArchitectureSpec) or spec.name != entry.name:
            found_as = f"architecture {spec.name!r}" if isinstance(spec, ArchitectureSpec) else type(spec).__name__
            raise ValueError(f"tfbert family {where} names {found_as}; expected the ArchitectureSpec of "
                             f"architecture {entry.name!r}")
        found.append(spec)
    return found


def _add(spec: ArchitectureSpec) -> None:
    """Registers `spec` (the same spec twice is once; another spec of a taken name a `ValueError`) and tells the
    watchers."""
    registered = _SPECS.get(spec.name)
    if registered is spec:
        return
    if registered is not None:
        raise ValueError(f"architecture {spec.name!r} is already registered; pass replace=True to replace it")
    _SPECS[spec.name] = spec
    for watcher in _WATCHERS:
        watcher(spec)


def register(spec: ArchitectureSpec, *, replace: bool = False) -> ArchitectureSpec:
    """Adds `spec` under `spec.name` (a `ValueError` if the name is taken, unless `replace`); returns it."""
    if not isinstance(spec, ArchitectureSpec):
        raise TypeError(f"register takes an ArchitectureSpec, got {type(spec).__name__}")
    if _specs().get(spec.name) is spec:
        raise ValueError(f"architecture {spec.name!r} is already registered; pass replace=True to replace it")
    if replace:
        _SPECS.pop(spec.name, None)
    _add(spec)
    return spec


def watch(watcher: Callable[[ArchitectureSpec], None]) -> None:
    """Calls `watcher(spec)` for every registered family, now and as each one is registered
    (`tfbert.keras_classes` registers the families' Keras classes so)."""
    registered = tuple(_specs().values())
    _WATCHERS.append(watcher)
    for spec in registered:
        watcher(spec)


def family_classes() -> dict[str, str]:
    """Every registered family's Keras classes: `{class name: "module:Class"}` (`ArchitectureSpec.keras_classes`).

    Example:
        >>> family_classes()["DebertaRTDModel"]
        'tfbert.families.deberta.models:DebertaRTDModel'
    """
    return {path.partition(":")[2]: path for spec in _specs().values() for path in spec.keras_classes}


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

