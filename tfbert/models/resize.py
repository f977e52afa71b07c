"""Growing (or shrinking) a model's vocabulary after tokens are added to its tokenizer."""

from __future__ import annotations

from typing import Mapping, Sequence

from keras import ops

from tfbert.models.encoder import Encoder
from tfbert.models.pretraining import PretrainingModel


def resize_token_embeddings(model: Encoder | PretrainingModel, vocab_size: int,
                            pieces: Mapping[int, Sequence[int]] | None = None) -> Encoder | PretrainingModel:
    """A copy of `model` whose vocabulary has `vocab_size` rows; existing rows keep their values.

    The token table and, in a pretraining model, the MLM output bias change
    size: the first `min(old, new)` rows are copied; an added row listed in
    `pieces` (new id -> old piece ids) is the mean of those rows (`grow_rows`),
    the others get the model's initialiser (bias 0). Every other weight is
    copied unchanged.

    Example:
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
        >>> encoder = load_pretrained_encoder("runs/bert")
        >>> bigger = resize_token_embeddings(encoder, encoder.config.vocab_size + 2)
        >>> bigger.config.vocab_size
        30524
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
        value = old.value
        if old.shape != new.shape and old.shape[0] < new.shape[0]:
            value = grow_rows(old.value, new.value, pieces or {})
        elif old.shape != new.shape:
            value = old.value[: new.shape[0]]
        new.assign(value)
    return resized


def grow_rows(old, initial, pieces: Mapping[int, Sequence[int]]):
    """`initial` (a grown table's starting value) with `old`'s rows first and each added row the mean of its pieces.

    `old` is `[old_vocab, ...]` and `initial` `[new_vocab, ...]`: rows below `old_vocab` are `old`'s, bit
    for bit; an added row `i` with `pieces[i]` (old ids, from
    `tfbert.text.vocabulary_growth.old_pieces_of_added_tokens`) is the mean of those old rows, and
    one without pieces keeps its initial value. Works for the token table and the MLM output bias.

    Example:
        >>> table, initial = ops.ones((8000, 4)), ops.zeros((8001, 4))    # the old rows, a new table's initial rows
        >>> grown = grow_rows(table, initial, {8000: [412, 77]})   # row 8000 = mean of rows 412 and 77
        >>> tuple(grown.shape)
        (8001, 4)
    """
    old, initial = ops.convert_to_tensor(old), ops.convert_to_tensor(initial)
    rows = [old]
    for index in range(old.shape[0], initial.shape[0]):
        ids = list(pieces.get(index, ()))
        row = ops.mean(ops.take(old, ids, axis=0), axis=0) if ids else initial[index]
        rows.append(ops.expand_dims(ops.cast(row, old.dtype), 0))
    return ops.concatenate(rows, axis=0)
