"""Export tfbert models as SavedModels that take raw strings, laid out for TF Serving, or as TF Lite folders
(`export_tflite`, for batch-1 latency on CPUs), and run them (loaded here, or on a TF Serving model server)
with one client.

The names below are imported when first used (TensorFlow with them), so `tfbert predict --help`
stays free of TensorFlow.

Example:
    >>> from tfbert.export import SavedModelClient, export_saved_model
    >>> export_saved_model("runs/sst2/best.keras", "classifier", tokenizer="runs/sst2/tokenizer",
    ...                    label_names=["negative", "positive"])
    PosixPath('saved_models/classifier/1')
    >>> SavedModelClient("saved_models/classifier")(["a gripping film"])[0]["probabilities"]   # two steps of training
    {'negative': 0.5..., 'positive': 0.4...}
"""

from tfbert._lazy import by_module, lazy_exports

__all__ = ["SavedModelClient", "TFLiteExport", "export_hub_pair", "export_saved_model", "export_tflite",
           "next_version", "predict_texts"]
__getattr__, __dir__ = lazy_exports(__name__, by_module({
    "tfbert.export.saved_model": ["export_hub_pair", "export_saved_model", "next_version"],
    "tfbert.export.tflite": ["export_tflite"],
    "tfbert.export.tflite_model": ["TFLiteExport"],
    "tfbert.export.client": ["SavedModelClient", "predict_texts"],
}))
