"""Export tfbert models as SavedModels that take raw strings, laid out for TF Serving.

Example:
    >>> from tfbert.export import export_saved_model
    >>> export_saved_model(classifier, "sst2", tokenizer=tokenizer, label_names=["negative", "positive"])  # doctest: +SKIP
    PosixPath('saved_models/sst2/1')
"""

from tfbert.export.saved_model import export_hub_pair, export_saved_model, next_version

__all__ = ["export_hub_pair", "export_saved_model", "next_version"]
