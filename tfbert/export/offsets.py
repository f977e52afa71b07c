"""Byte offsets (what the tokenizers give) to character offsets (what clients index strings with)."""

from __future__ import annotations

import tensorflow as tf

_BEYOND_ANY_OFFSET = tf.int64.max


def byte_to_char_offsets(text: tf.Tensor, byte_offsets: tf.Tensor) -> tf.Tensor:
    """Character index of each byte offset `[batch, n]` into the valid UTF-8 strings `text` `[batch]`.

    An offset inside a character maps to the next character; the end of a string maps to its length.

    Example:
        >>> byte_to_char_offsets(tf.constant(["é a"]), tf.constant([[0, 2, 3, 4]], tf.int64)).numpy()
        array([[0, 1, 2, 3]], dtype=int32)
    """
    _, char_starts = tf.strings.unicode_decode_with_offsets(text, "UTF-8")
    starts = char_starts.to_tensor(default_value=_BEYOND_ANY_OFFSET)
    starts = tf.concat([starts, tf.fill([tf.shape(starts)[0], 1], tf.constant(_BEYOND_ANY_OFFSET, tf.int64))], 1)
    return tf.searchsorted(starts, tf.cast(byte_offsets, tf.int64), side="left", out_type=tf.int32)
