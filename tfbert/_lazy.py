"""PEP 562 lazy attributes for packages whose parts import TensorFlow: nothing is imported until used.

Example (in a package's `__init__.py`):
    >>> __getattr__, __dir__ = lazy_exports(__name__, {"train": "tfbert.training.driver"})
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: attribute `name` comes from module `exports[name]`.

    A module path ending in `:` gives the module itself (`{"convert": "tfbert.convert:"}`). The
    value is cached on the package, so the import runs once.
    """
    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, _, attribute = exports[name].partition(":")
        module = importlib.import_module(module_name)
        value = module if exports[name].endswith(":") else getattr(module, attribute or name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
