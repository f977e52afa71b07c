"""The generic model code every family builds on (`Encoder`, heads, objectives, `PretrainingModel`), and
the family pretraining models re-exported from `tfbert.families.<name>.models`, imported on first use.

Example:
    >>> from tfbert.models import ElectraPretrainingModel
    >>> ElectraPretrainingModel.__module__
    'tfbert.families.electra.models'
"""

from tfbert._lazy import by_module, lazy_exports

_EXPORTS = by_module({
    "tfbert.models.encoder": ["Encoder", "build_encoder"],
    "tfbert.models.pretraining": ["PretrainingModel"],
    "tfbert.families.electra.models": ["ElectraPretrainingModel"],
    "tfbert.families.spanbert.models": ["SpanBertPretrainingModel"],
    "tfbert.families.xlm.models": ["XLMPretrainingModel"],
    "tfbert.families.xlmr.models": ["XLMRobertaPretrainingModel"],
    "tfbert.families.deberta.models": ["DebertaRTDModel"],
})
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
