"""Growing (or shrinking) a model's vocabulary after tokens are added to its tokenizer."""

from __future__ import annotations

import numpy as np

from tfbert.models.encoder import Encoder
from tfbert.models.pretraining import PretrainingModel


def resize_token_embeddings(model: Encoder | PretrainingModel, vocab_size: int) -> Encoder | PretrainingModel:
    """A copy of `model` whose vocabulary has `vocab_size` rows; existing rows keep their values.

    The token table and, in a pretraining model, the MLM output bias change
    size: the first `min(old, new)` rows are copied, added rows get the model's
    initialiser (bias 0). Every other weight is copied unchanged.

    Example:
        >>> bigger = resize_token_embeddings(encoder, encoder.config.vocab_size + 2)
    """
    if isinstance(model, PretrainingModel):
        config = model.config.replace(encoder=model.config.encoder.replace(vocab_size=vocab_size))
    elif isinstance(model, Encoder):
        config = model.config.replace(vocab_size=vocab_size)
    else:
        raise TypeError(f"expected a tfbert Encoder or PretrainingModel, got {type(model).__name__}")
    resized = type(model).from_config({**model.get_config(), "config": config.to_dict()})
    for old, new in zip(model.weights, resized.weights):
        if old.path != new.path:
            raise ValueError(f"weights do not line up: {old.path} vs {new.path}")
        value = np.asarray(old.numpy())
        if old.shape != new.shape:
            rows = min(old.shape[0], new.shape[0])
            grown = np.asarray(new.numpy()).copy()
            grown[:rows] = value[:rows]
            value = grown
        new.assign(value)
    return resized
