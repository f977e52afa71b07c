"""The generic model code every family builds on (`Encoder`, heads, objectives, `PretrainingModel`), and
every registered family's Keras classes (its spec's `keras_classes`, from `tfbert.families.<name>.models`),
imported on first use.

Example:
    >>> from tfbert.models import ElectraPretrainingModel
    >>> ElectraPretrainingModel.__module__
    'tfbert.families.electra.models'
"""

from tfbert._lazy import by_module, lazy_exports


def family_exports() -> dict[str, str]:
    """The registered families' Keras classes, `{name: "module:Class"}`: from the specs, not a list here."""
    from tfbert import architectures   # on first use: importing this package reads no spec

    return architectures.family_classes()


_EXPORTS = by_module({
    "tfbert.models.encoder": ["Encoder", "build_encoder"],
    "tfbert.models.pretraining": ["PretrainingModel"],
})
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, more=family_exports)
