"""PEP 562 lazy attributes for packages whose parts import TensorFlow: nothing is imported until used.

Example (in a package's `__init__.py`):
    >>> __getattr__, __dir__ = lazy_exports(__name__, by_module({"tfbert.training.driver": ["train"]}))
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Callable, Mapping, Sequence


class _LazyPackage(types.ModuleType):
    """A package whose exported names win over its submodules of the same name.

    Importing a submodule sets the package's attribute of its name (importing a module `pkg.finetune`
    sets `pkg.finetune`); where the package exports something else under that name (the function
    `finetune`), such an assignment is skipped and the lazy export answers.
    """

    _lazy_exports: Mapping[str, str] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        target = self._lazy_exports.get(name, ":")
        if isinstance(value, types.ModuleType) and not target.endswith(":"):
            return
        super().__setattr__(name, value)


def by_module(names_of: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """`{module: names}` as `lazy_exports`' `{name: module}`.

    Example:
        >>> by_module({"tfbert.config": ["load_config", "ModelConfig"]})
        {'load_config': 'tfbert.config', 'ModelConfig': 'tfbert.config'}
    """
    return {name: module for module, names in names_of.items() for name in names}


def family_exports() -> dict[str, str]:
    """The registered families' Keras classes as exports, `{name: "module:Class"}` (their specs' `keras_classes`),
    for `tfbert` and `tfbert.models`: the specs list them, no package does."""
    # Deferred (start-up): `import tfbert` reads no family spec (the registry imports them all on first use)
    from tfbert import architectures

    return architectures.family_classes()


def lazy_exports(package: str, exports: Mapping[str, str],
                 more: Callable[[], Mapping[str, str]] | None = None) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: attribute `name` comes from module `exports[name]`.

    A module path ending in `:` gives the module itself (`{"convert": "tfbert.convert:"}`), one with
    `:name` that attribute of the module. `more()` gives further exports in the same form, asked only
    for a public name `exports` lacks, for `__dir__` and for `__all__` (then not set by the package):
    the registered families' classes, which come from their specs. The value is cached on the package,
    so the import runs once.
    """
    module = sys.modules[package]
    module.__class__ = _LazyPackage
    object.__setattr__(module, "_lazy_exports", dict(exports))

    def every() -> dict[str, str]:
        return {**(more() if more else {}), **exports}

    def __getattr__(name: str) -> Any:
        if name == "__all__" and more is not None:
            return sorted(every())
        target = exports.get(name) or (every().get(name) if more and not name.startswith("_") else None)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, _, attribute = target.partition(":")
        imported = importlib.import_module(module_name)
        value = imported if target.endswith(":") else getattr(imported, attribute or name)
        types.ModuleType.__setattr__(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(module)) | set(every()))

    return __getattr__, __dir__
