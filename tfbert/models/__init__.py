"""The generic model code every family builds on (`Encoder`, heads, objectives, `PretrainingModel`), and
every registered family's Keras classes (its spec's `keras_classes`, from `tfbert.families.<name>.models`),
imported on first use.

Example:
    >>> from tfbert.models import ElectraPretrainingModel
    >>> ElectraPretrainingModel.__module__
    'tfbert.families.electra.models'
"""

from tfbert._lazy import by_module, family_exports, lazy_exports

_EXPORTS = by_module({
    "tfbert.models.encoder": ["Encoder", "build_encoder"],
    "tfbert.models.pretraining": ["PretrainingModel"],
})
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, more=family_exports)
