"""Checkpoints of other libraries in and out: `load_huggingface`, `config_from_huggingface`, `huggingface_config`
(`tfbert.convert.huggingface`), imported on first use; ELECTRA's two checkpoints in one model are its family's
(`tfbert.families.electra.checkpoints.load_electra`).

The weight-name maps live with each family (`tfbert/families/<family>/formats.py`); the layouts they
share (dense, LayerNorm, fused QKV, a BERT-style block) in `tfbert.convert.weights`.

Example:
    >>> from tfbert import convert
    >>> from tfbert.config import load_config
    >>> convert.huggingface_config(load_config("roberta_base"))["model_type"]
    'roberta'
"""

from tfbert._lazy import lazy_exports

__all__ = ["config_from_huggingface", "huggingface_config", "load_huggingface", "read_state_dict"]
__getattr__, __dir__ = lazy_exports(__name__, {name: "tfbert.convert.huggingface" for name in __all__})
