"""Every Keras class tfbert registers, so `import tfbert` then `keras.models.load_model("x.keras")` works.

`import tfbert` imports neither Keras nor TensorFlow (so `tfbert --help` stays fast). Instead
`register_on_keras_import` puts one stand-in per class into Keras' registry as soon as Keras is
imported (at once if it already is): a stand-in's `from_config` imports the class's module, whose
decorator then registers the real class, and builds the object with it. Keras' deserializer only
calls `from_config` on what it finds, and the real registration replaces the stand-in. Written by
hand: Keras has no lazy registration, and `wrapt`'s post-import hooks import asyncio, which would
triple the time of `import tfbert`; the hook here is a meta-path finder that wraps Keras' loader.

The classes are `CLASSES` (the generic ones, by module) and every registered family's
`ArchitectureSpec.keras_classes`, so a family's classes are listed in its spec alone, an installed
family's too. `tests/models/test_serialization.py` checks `classes()` against Keras' registry: a new
generic class is added to `CLASSES`.

Example:
    >>> import tfbert, keras
    >>> type(keras.models.load_model("runs/sst2/best.keras")).__name__
    'SequenceClassifier'
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

PACKAGE = "tfbert"
# module -> the classes it registers under package "tfbert" (`@keras.saving.register_keras_serializable`);
# the families' are in their specs.
CLASSES: dict[str, tuple[str, ...]] = {
    "tfbert.metrics.keras_metrics": ("F1", "MatthewsCorrelation"),
    "tfbert.models.attention": ("SelfAttention",),
    "tfbert.models.dropout": ("Dropout",),
    "tfbert.models.embeddings": ("TextEmbeddings", "TokenEmbedding"),
    "tfbert.models.encoder": ("Encoder",),
    "tfbert.models.feedforward": ("FeedForward",),
    "tfbert.models.objectives": ("RatioMetric",),
    "tfbert.models.pretraining": ("PretrainingModel",),
    "tfbert.models.relative": ("RelativePositions",),
    "tfbert.models.tasks.classification": ("SequenceClassifier", "SequenceRegressor"),
    "tfbert.models.tasks.embedding": ("EmbeddingDistiller", "SentenceEmbedder", "SiameseEmbedder"),
    "tfbert.models.tasks.layers": ("MaskPadding", "MergeChoices", "Pooling", "SplitChoices"),
    "tfbert.models.tasks.multiple_choice": ("MultipleChoice",),
    "tfbert.models.tasks.question_answering": ("SpanExtractor",),
    "tfbert.models.tasks.tagging": ("TokenClassifier",),
    "tfbert.training.optimization": ("AdamWDense", "LambDense"),
    "tfbert.training.schedules": ("WarmupLinearDecay",),
}


class _StandIn:
    """Keras' registry entry for a tfbert class whose module is not imported yet."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def _real(self) -> type:
        return getattr(importlib.import_module(self.module), self.name)

    def from_config(self, config: dict, custom_objects: Any = None) -> Any:
        return self._real().from_config(config)


def family_classes(spec: Any) -> dict[str, tuple[str, ...]]:
    """A family's Keras classes by module, from its spec's `keras_classes` (`"module:Class"`)."""
    by_module: dict[str, tuple[str, ...]] = {}
    for path in spec.keras_classes:
        module, _, name = path.partition(":")
        by_module[module] = (*by_module.get(module, ()), name)
    return by_module


def classes() -> dict[str, tuple[str, ...]]:
    """Every class tfbert registers, by module: `CLASSES` and the registered families'."""
    # Deferred (start-up): `import tfbert` reads no family spec (the registry imports them all on first use)
    from tfbert import architectures

    table = dict(CLASSES)
    for name in architectures.names():
        for module, names in family_classes(architectures.get(name)).items():
            table[module] = (*table.get(module, ()), *names)
    return table


def import_all() -> None:
    """Imports every module that registers a tfbert class (the real classes, not stand-ins)."""
    for module in classes():
        importlib.import_module(module)


def _stand_ins(table: dict[str, tuple[str, ...]]) -> None:
    registry = sys.modules["keras"].saving.get_custom_objects()
    for module, names in table.items():
        for name in names:
            registry.setdefault(f"{PACKAGE}>{name}", _StandIn(module, name))


def _register() -> None:
    """The generic classes' stand-ins, and every family's, now and as each family registers."""
    # Deferred (start-up): `import tfbert` reads no family spec (the registry imports them all on first use)
    from tfbert import architectures

    _stand_ins(CLASSES)
    try:
        architectures.watch(lambda spec: _stand_ins(family_classes(spec)))
    except (ImportError, TypeError, ValueError):
        # An installed family that does not load must not break `import keras`: the registry raises the
        # same error, naming the entry point, where it is used next.
        pass


class _AfterKerasImport:
    """A meta-path finder that finds nothing itself; it wraps the loader of `keras` so that `_register` runs
    once Keras is imported. (Not an `importlib.abc.MetaPathFinder` subclass: importing the ABCs costs more
    than the rest of `import tfbert`.) It stays in place until Keras is actually executed: TensorFlow's
    `__init__` asks `importlib.util.find_spec("keras")` without importing it, and that spec is thrown away."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "keras":
            return None
        import importlib.util

        position = sys.meta_path.index(self)
        del sys.meta_path[position]       # the spec Python itself would find, without this finder recursing
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(position, self)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            execute(module)
            _register()
        spec.loader.exec_module = exec_module
        return spec


def register_on_keras_import() -> None:
    """Registers the stand-ins now if Keras is imported, else when it is."""
    if "keras" in sys.modules:
        _register()
    elif not any(isinstance(finder, _AfterKerasImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterKerasImport())
