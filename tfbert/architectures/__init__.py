"""The registry every part of tfbert reads, and what an architecture spec is; the families live in `tfbert.families`.

`get(name)` is the `ArchitectureSpec` of a family (see `tfbert.architectures.spec`); the
built-in families (`tfbert/families/<name>/spec.py`) and those an installed distribution names
in the entry-point group `tfbert.families` register on first use. Importing this package imports
no TensorFlow, Keras or family. A new family is a package with a spec, installed with that entry
point (docs/adding-an-architecture.md), or a spec passed to `register`.

Example:
    >>> from tfbert import architectures
    >>> architectures.names()
    ('bert', 'albert', 'roberta', 'electra', 'spanbert', 'xlm', 'xlmr', 'deberta')
    >>> architectures.get("roberta").packing_style
    'roberta'
"""

from tfbert.architectures.registry import (family_classes, get, installed_families, model_types, names, register,
                                           unregister, watch, with_format)
from tfbert.architectures.spec import (MLM_PRETRAINING_MODEL, ArchitectureSpec, CheckpointFormat, ExampleRecipe,
                                       HuggingFaceFormat, KerasHubFormat, TF1Format)

__all__ = ["MLM_PRETRAINING_MODEL", "ArchitectureSpec", "CheckpointFormat", "ExampleRecipe", "HuggingFaceFormat",
           "KerasHubFormat", "TF1Format", "family_classes", "get", "installed_families", "model_types", "names",
           "register", "unregister", "watch", "with_format"]
