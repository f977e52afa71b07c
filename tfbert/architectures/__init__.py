"""Architecture families, one file each, and the registry every part of tfbert reads.

`get(name)` is the `ArchitectureSpec` of a family (see `tfbert.architectures.spec`); the
built-in families register when this package is imported. Importing it imports no TensorFlow
or Keras. A new family is one module that builds a spec and calls `register`
(docs/adding-an-architecture.md).

Example:
    >>> from tfbert import architectures
    >>> architectures.names()
    ('bert', 'albert', 'roberta', 'electra', 'spanbert', 'xlm', 'xlmr', 'deberta')
    >>> architectures.get("roberta").packing_style
    'roberta'
"""

from tfbert.architectures.registry import get, model_types, names, register, unregister, with_format
from tfbert.architectures.spec import ArchitectureSpec, CheckpointFormat, ExampleRecipe, HuggingFaceFormat

# The built-in families, in the order `names()` lists them.
from tfbert.architectures import bert, albert, roberta, electra, spanbert, xlm, xlmr, deberta  # noqa: E402,F401  isort: skip

__all__ = ["ArchitectureSpec", "CheckpointFormat", "ExampleRecipe", "HuggingFaceFormat", "get", "model_types", "names",
           "register", "unregister", "with_format"]
