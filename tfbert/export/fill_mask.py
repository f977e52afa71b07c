"""Fill-mask inside the graph: the mask token in raw text becomes the mask id, the MLM head ranks tokens.

Tokenizers read `"[MASK]"` in text as text, so the text is split at the mask token, each part
is tokenized, and the parts are joined with the mask id. Whitespace before a mask is dropped
(as Hugging Face's `<mask>` does with `lstrip`), so byte-level BPE gives the usual pieces.

Example:
    >>> from tfbert.text import load_tokenizer
    >>> tokenizer = load_tokenizer("vocab/")
    >>> ids = tokenize_with_masks(tokenizer, tf.constant(["paris is the [MASK] of france."]))
    >>> int(tokenizer.mask_id) in ids[0].numpy().tolist()
    True
"""

from __future__ import annotations

import re

import tensorflow as tf

from tfbert.text.base import Tokenizer, as_utf8


def tokenize_with_masks(tokenizer: Tokenizer, text: tf.Tensor) -> tf.RaggedTensor:
    """Token ids `[batch, None]` with `tokenizer.mask_id` wherever the text holds the mask token."""
    mask_token = tokenizer.special_tokens.get("mask")
    if mask_token is None:
        raise ValueError("the tokenizer has no mask token, so fill-mask cannot be exported")
    text = tf.strings.regex_replace(as_utf8(text), r"\s*" + re.escape(mask_token), mask_token)
    parts = tf.strings.split(text, sep=mask_token)
    ids = tokenizer.tokenize(parts.flat_values)
    mask = tf.RaggedTensor.from_tensor(tf.fill([ids.nrows(), 1], tf.constant(tokenizer.mask_id, ids.dtype)))
    # Every part is followed by a mask, then the mask after each row's last part is dropped.
    joined = parts.with_flat_values(tf.concat([ids, mask], axis=1)).merge_dims(1, 2)
    return joined[:, :-1]


def mask_positions(token_ids: tf.Tensor, mask_id: int, max_masks: int) -> tuple[tf.Tensor, tf.Tensor]:
    """The positions of `mask_id` in each row `[batch, max_masks]` (0 where unused), and which slots
    hold a mask (bool). A row with more masks than `max_masks` is an error, never a silent drop."""
    is_mask = tf.equal(token_ids, mask_id)
    too_many = tf.debugging.assert_less_equal(
        tf.reduce_sum(tf.cast(is_mask, tf.int32), axis=1), max_masks,
        message=f"a text holds more mask tokens than the {max_masks} this export predicts; send at most "
                f"{max_masks} per text, or export again with --max-masks")
    with tf.control_dependencies([too_many]):
        is_mask = tf.identity(is_mask)
    columns = tf.broadcast_to(tf.range(tf.shape(token_ids)[1]), tf.shape(token_ids))
    found = tf.ragged.boolean_mask(columns, is_mask)[:, :max_masks]
    positions = found.to_tensor(default_value=0, shape=[None, max_masks])
    used = tf.sequence_mask(found.row_lengths(), max_masks)
    return positions, used


def top_tokens(tokenizer: Tokenizer, mlm_logits: tf.Tensor, used: tf.Tensor, positions: tf.Tensor,
               top_k: int) -> dict[str, tf.Tensor]:
    """Top-k `tokens`, `token_ids`, `scores` (probabilities) `[batch, max_masks, top_k]` and
    `mask_positions` `[batch, max_masks]`; unused slots hold `""`, -1 and 0."""
    scores, ids = tf.math.top_k(tf.nn.softmax(mlm_logits, axis=-1), k=top_k)
    used_k = tf.broadcast_to(used[:, :, None], tf.shape(ids))
    ids = tf.where(used_k, ids, -1)
    return {
        "tokens": tf.where(used_k, tokenizer.id_to_token(tf.maximum(ids, 0)), ""),
        "token_ids": ids,
        "scores": tf.where(used_k, scores, 0.0),
        "mask_positions": tf.where(used, positions, -1),
    }
