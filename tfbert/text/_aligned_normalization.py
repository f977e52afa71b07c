"""Normalization that remembers which input bytes each normalized byte came from.

TF-Text's normalizers give offsets only for its own (NFKC case-folding) BERT normalization, so
tfbert normalizes piecewise: the input is cut into units, each unit is normalized alone, and the
normalized text is the units' results joined. A normalized byte then maps back to its unit's input
bytes, as Hugging Face `tokenizers` aligns each normalized character with the character it came
from. Units are tried from fine to coarse, per row, keeping the first whose joined result equals
the whole string's normalization (so ids never change):

1. characters (all text except what canonical reordering or Hangul jamo composition touches);
2. a character with the marks and conjoining jamo after it (combining sequences);
3. the whole string (always equal; every token then spans the string).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import tensorflow as tf
import tensorflow_text as tf_text

_UNIT_PATTERNS = (r"(?s).", r"(?s).[\p{M}\x{1160}-\x{11FF}]*", r"(?s).+")


class AlignedText(NamedTuple):
    """Normalized strings [batch] and, per input unit, where its normalized bytes end (cumulative
    over the whole batch, flat) and the input bytes it covers (per row)."""

    normalized: tf.Tensor
    unit_ends: tf.Tensor
    unit_starts_in_input: tf.Tensor
    unit_ends_in_input: tf.Tensor
    row_starts: tf.Tensor


def _units(strings: tf.Tensor, pattern: str, normalize: Callable[[tf.Tensor], tf.Tensor]):
    # regex_split stops at NUL; \x01 has NUL's length and is normalized alike (both are dropped controls).
    searchable = tf.strings.regex_replace(strings, "\x00", "\x01")
    units, starts, ends = tf_text.regex_split_with_offsets(searchable, pattern, pattern)
    normalized = units.with_flat_values(normalize(units.flat_values))
    return normalized, starts, ends


def _take_rows(choice: tf.Tensor, candidates):
    """Row i of the result is row i of candidates[choice[i]] (each a tuple of RaggedTensors [batch, units])."""
    picked = [tf.where(tf.equal(choice, level))[:, 0] for level in range(len(candidates))]
    order = tf.math.invert_permutation(tf.concat(picked, 0))
    return tuple(
        tf.gather(tf.concat([tf.gather(parts[part], rows) for parts, rows in zip(candidates, picked)], 0), order)
        for part in range(len(candidates[0])))


def normalize_with_alignment(strings: tf.Tensor, normalize: Callable[[tf.Tensor], tf.Tensor]) -> AlignedText:
    """`normalize(strings)` on valid UTF-8 strings [batch], with the alignment `input_span` reads."""
    whole = normalize(strings)
    candidates = [_units(strings, pattern, normalize) for pattern in _UNIT_PATTERNS]
    fits = [tf.equal(tf.strings.reduce_join(units, axis=1), whole) for units, _, _ in candidates[:-1]]
    fits.append(tf.ones_like(whole, tf.bool))
    # The first unit level whose joined result is the whole normalization, per row.
    choice = tf.argmax(tf.cast(tf.stack(fits, 1), tf.int32), axis=1, output_type=tf.int32)
    units, starts, ends = _take_rows(choice, candidates)
    lengths = tf.cast(tf.strings.length(units.flat_values), tf.int64)
    unit_ends = tf.cumsum(lengths)
    row_lengths = tf.reduce_sum(units.with_flat_values(lengths), axis=1)
    row_starts = tf.cumsum(row_lengths, exclusive=True)
    return AlignedText(tf.strings.reduce_join(units, axis=1), unit_ends, starts.flat_values, ends.flat_values, row_starts)


def input_span(aligned: AlignedText, rows: tf.Tensor, starts: tf.Tensor, ends: tf.Tensor):
    """Input byte span of normalized byte spans [starts, ends) in `rows`: from the start of the unit
    that holds the first byte to the end of the unit that holds the last."""
    base = tf.gather(aligned.row_starts, rows)
    first = tf.searchsorted(aligned.unit_ends, base + starts, side="right")
    last = tf.searchsorted(aligned.unit_ends, base + ends - 1, side="right")
    return tf.gather(aligned.unit_starts_in_input, first), tf.gather(aligned.unit_ends_in_input, last)


def character_ends(strings: tf.Tensor, rows: tf.Tensor, positions: tf.Tensor) -> tf.Tensor:
    """End byte offset of the character of `strings[rows]` (valid UTF-8) that holds byte `positions`."""
    _, starts = tf.strings.unicode_decode_with_offsets(strings, "UTF-8")
    row_starts = tf.cumsum(tf.cast(tf.strings.length(strings), tf.int64), exclusive=True)
    # Each character's start, as a position in all strings laid end to end; a string's end closes its last one.
    boundaries = starts + tf.expand_dims(row_starts, 1)
    base = tf.gather(row_starts, rows)
    following = tf.searchsorted(boundaries.flat_values, base + positions, side="right")
    row_ends = tf.gather(row_starts + tf.cast(tf.strings.length(strings), tf.int64), rows)
    next_start = tf.gather(tf.concat([boundaries.flat_values, [tf.int64.max]], 0), following)
    return tf.minimum(next_start, row_ends) - base
