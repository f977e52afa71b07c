"""Dynamic masked-language-model masking as TensorFlow graph ops.

`MaskedLMMasker` picks positions to predict in packed sequences and corrupts
them (80% `[MASK]`, 10% a random token, 10% unchanged by default). It masks
single tokens (BERT), whole words (BERT whole-word masking), n-grams of whole
words with p(n) ∝ 1/n (ALBERT) or geometric spans of whole words (SpanBERT).
All outputs have static shapes `[batch, sequence_length]` and
`[batch, max_predictions]`, so it runs inside `tf.data.Dataset.map` for TPUs.

Randomness is stateless: every call takes a `[2]` seed, and `mask_dataset`
feeds each element its own seed from `tf.data.Dataset.random`, which draws a
fresh stream every epoch. A seeded pipeline repeats exactly; an unseeded one
(or the next epoch) masks differently.

Why not TF-Text's `mask_language_model` with `RandomItemSelector` (what
keras-hub uses)? It selects items with ragged shuffles, has no whole-word,
n-gram or span selection, no span-boundary outputs and no per-element seeds,
and it rounds the per-sequence count up; here one sort per batch selects
units of any kind with an exactly unbiased expected count.
"""

from __future__ import annotations

from typing import Literal, Mapping, Sequence

import numpy as np
import tensorflow as tf

from tfbert.data.word_boundaries import WordScheme, word_start_flags

MaskingUnit = Literal["token", "whole_word", "ngram", "span"]


class MaskedLMMasker:
    """Choose and corrupt masked-LM prediction positions in packed sequences.

    Call it on a dict holding `token_ids` (int, `[batch, length]` or `[length]`)
    and optionally `padding_mask`; other entries pass through. It returns the
    dict with `token_ids` corrupted plus `masked_positions`, `masked_ids`
    (the original ids; int32) and `masked_weights` (float32, 1.0 for a real
    prediction, 0.0 for an unused slot), each `[batch, max_predictions]`.
    With `unit="span"` it also returns, per prediction slot, the span's
    boundary positions `span_left_positions` (s - 1) and `span_right_positions`
    (e + 1) and `span_offsets` (i - s + 1, starting at 1), as SpanBERT's span
    boundary objective needs; unused slots hold 0.

    Selection: a sequence's maskable tokens (neither special nor padding) are
    grouped into units (tokens, words, n-grams or spans); `selection_rate` of
    the units, stochastically rounded, are taken in random order, so the
    expected number of selected tokens is exactly `selection_rate` of the
    maskable tokens and the lengths of the selected units follow the unit
    distribution without bias. A unit is never split, and units stop being
    taken before the selection would exceed `max_predictions` tokens.

    Example:

    >>> masker = MaskedLMMasker(vocabulary_size=30522, mask_id=103,
    ...                         special_token_ids=[0, 100, 101, 102, 103],
    ...                         max_predictions=20)
    >>> batch = {"token_ids": tf.constant([[101, 2023, 2003, 1037, 3231, 102, 0, 0]]),
    ...          "padding_mask": tf.constant([[1, 1, 1, 1, 1, 1, 0, 0]])}
    >>> out = masker(batch, seed=[1, 2])
    >>> out["masked_positions"].shape
    TensorShape([1, 20])

    Args:
        vocabulary_size: number of token ids; random replacements are drawn
            uniformly from ids in `[0, vocabulary_size)` that are not special.
        mask_id: id of the mask token.
        special_token_ids: ids that are never selected (CLS, SEP, PAD, MASK,
            UNK, ...).
        max_predictions: the number of prediction slots per sequence.
        selection_rate: fraction of maskable tokens to select.
        mask_token_rate: fraction of selected tokens replaced by `mask_id`.
        random_token_rate: fraction replaced by a random token; the rest stay.
        unit: "token", "whole_word", "ngram" or "span".
        word_starts: for every unit but "token", a boolean per vocabulary id,
            True where the piece starts a word (see `word_start_flags`).
        max_ngram: longest n-gram for `unit="ngram"` (n-grams of whole words,
            p(n) ∝ 1/n for n = 1..max_ngram, as in ALBERT).
        span_p: geometric parameter of span lengths for `unit="span"`.
        max_span_words: span lengths (in words) are clipped to this.
        replace_whole_units: draw the 80/10/10 decision once per unit instead
            of once per token; defaults to True for "span" (SpanBERT) and
            False otherwise (BERT and ALBERT decide per token).
    """

    def __init__(
        self,
        *,
        vocabulary_size: int,
        mask_id: int,
        special_token_ids: Sequence[int],
        max_predictions: int,
        selection_rate: float = 0.15,
        mask_token_rate: float = 0.8,
        random_token_rate: float = 0.1,
        unit: MaskingUnit = "token",
        word_starts: Sequence[bool] | np.ndarray | None = None,
        max_ngram: int = 3,
        span_p: float = 0.2,
        max_span_words: int = 10,
        replace_whole_units: bool | None = None,
    ):
        if unit not in ("token", "whole_word", "ngram", "span"):
            raise ValueError(f"unknown masking unit {unit!r}")
        if unit != "token" and word_starts is None:
            raise ValueError(f"unit={unit!r} needs word_starts (see word_start_flags)")
        if mask_token_rate + random_token_rate > 1.0:
            raise ValueError("mask_token_rate + random_token_rate must not exceed 1")
        self.vocabulary_size = vocabulary_size
        self.mask_id = mask_id
        self.max_predictions = max_predictions
        self.selection_rate = selection_rate
        self.mask_token_rate = mask_token_rate
        self.random_token_rate = random_token_rate
        self.unit = unit
        self.replace_whole_units = unit == "span" if replace_whole_units is None else replace_whole_units

        special = np.zeros([vocabulary_size], dtype=bool)
        special[list(special_token_ids)] = True
        self._special_table = tf.constant(special)
        self._random_token_ids = tf.constant(np.flatnonzero(~special).astype(np.int32))
        if word_starts is not None:
            word_starts = np.asarray(word_starts, dtype=bool)
            if word_starts.shape != (vocabulary_size,):
                raise ValueError(f"word_starts has shape {word_starts.shape}, expected ({vocabulary_size},)")
            self._word_start_table = tf.constant(word_starts)
        if unit == "ngram":
            weights = 1.0 / np.arange(1, max_ngram + 1)
        elif unit == "span":
            weights = (1.0 - span_p) ** np.arange(max_span_words)
        else:
            weights = np.ones([1])
        self._unit_length_log_probs = tf.constant(np.log(weights / weights.sum())[np.newaxis], tf.float32)

    @classmethod
    def for_tokenizer(
        cls,
        tokenizer,
        *,
        max_predictions: int,
        unit: MaskingUnit = "token",
        word_scheme: WordScheme | None = None,
        **kwargs,
    ) -> "MaskedLMMasker":
        """Build a masker from a `tfbert.text` tokenizer's vocabulary and special ids.

        >>> from tfbert.text import WordPieceTokenizer
        >>> masker = MaskedLMMasker.for_tokenizer(
        ...     WordPieceTokenizer("vocab.txt"), max_predictions=20,
        ...     unit="whole_word", word_scheme="wordpiece")
        """
        vocabulary = tokenizer.vocabulary()
        word_starts = word_start_flags(vocabulary, word_scheme) if word_scheme else None
        return cls(
            vocabulary_size=len(vocabulary),
            mask_id=tokenizer.mask_id,
            special_token_ids=list(tokenizer.special_token_ids()),
            max_predictions=max_predictions,
            unit=unit,
            word_starts=word_starts,
            **kwargs,
        )

    def __call__(
        self, inputs: Mapping[str, tf.Tensor], seed: tf.Tensor | Sequence[int] | None = None
    ) -> dict[str, tf.Tensor]:
        token_ids = tf.cast(tf.convert_to_tensor(inputs["token_ids"]), tf.int32)
        padding_mask = inputs.get("padding_mask")
        padding_mask = tf.ones_like(token_ids) if padding_mask is None else tf.cast(padding_mask, tf.int32)
        unbatched = token_ids.shape.rank == 1
        if unbatched:
            token_ids, padding_mask = token_ids[tf.newaxis], padding_mask[tf.newaxis]

        select_seed, replace_seed = tf.unstack(tf.random.experimental.stateless_split(_as_seed(seed), 2))
        selection = self.select(token_ids, padding_mask, select_seed)
        outputs = self._corrupt(token_ids, selection, replace_seed)

        if unbatched:
            outputs = {name: value[0] for name, value in outputs.items()}
        result = dict(inputs)
        result.update(outputs)
        return result

    def select(self, token_ids: tf.Tensor, padding_mask: tf.Tensor, seed: tf.Tensor) -> dict[str, tf.Tensor]:
        """Choose the positions to predict in a `[batch, length]` batch.

        Returns a dict of `[batch, length]` tensors: `selected` (bool),
        `unit_ids` (the unit each maskable position belongs to, -1 elsewhere;
        for single tokens the unit id is the position), and, indexed by unit
        id, `unit_num_tokens`, `unit_num_words`, `unit_first_position` and
        `unit_last_position`.
        """
        group_seed, order_seed, rounding_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 3))
        batch_size, length = tf.shape(token_ids)[0], tf.shape(token_ids)[1]
        maskable = tf.logical_and(padding_mask > 0, tf.logical_not(tf.gather(self._special_table, token_ids)))
        previous_maskable = _shift_right(maskable, False)

        if self.unit == "token":
            return self._select_tokens(maskable, order_seed, rounding_seed)
        starts_piece = tf.gather(self._word_start_table, token_ids)
        word_starts = maskable & (starts_piece | tf.logical_not(previous_maskable))
        if self.unit in ("ngram", "span"):
            unit_starts = self._group_words(word_starts, maskable, previous_maskable, group_seed)
        else:
            unit_starts = word_starts

        unit_ids = tf.where(maskable, tf.cumsum(tf.cast(unit_starts, tf.int32), axis=1) - 1, -1)
        positions = tf.broadcast_to(tf.range(length)[tf.newaxis], tf.shape(token_ids))
        per_unit = _UnitReducer(unit_ids, batch_size, length)
        unit_num_tokens = per_unit.sum(tf.cast(maskable, tf.int32))
        unit_num_words = per_unit.sum(tf.cast(word_starts, tf.int32))
        unit_first_position = per_unit.min(positions)
        unit_last_position = per_unit.max(positions)

        # Take `selection_rate` of the units (stochastically rounded) in random
        # order. A random subset of units keeps the unit-length distribution
        # unbiased (a token budget filled greedily would favour short units),
        # and its expected size is `selection_rate` of the maskable tokens.
        num_units = tf.reduce_sum(tf.cast(unit_starts, tf.float32), axis=1, keepdims=True)
        rounding = tf.random.stateless_uniform([batch_size, 1], rounding_seed)
        num_to_take = tf.floor(self.selection_rate * num_units + rounding)
        eligible = (unit_num_tokens > 0) & (unit_num_tokens <= self.max_predictions)
        priority = tf.where(eligible, tf.random.stateless_uniform(tf.shape(token_ids), order_seed), -1.0)
        order = tf.argsort(priority, axis=1, direction="DESCENDING", stable=True)
        ordered_sizes = tf.gather(tf.where(eligible, unit_num_tokens, 0), order, batch_dims=1)
        rank = tf.cast(tf.range(length)[tf.newaxis], tf.float32)
        taken_in_order = (
            (rank < num_to_take)
            & (tf.cumsum(ordered_sizes, axis=1) <= self.max_predictions)
            & (ordered_sizes > 0)
        )
        taken = tf.gather(taken_in_order, tf.argsort(order, axis=1), batch_dims=1)
        selected = maskable & tf.gather(taken, tf.maximum(unit_ids, 0), batch_dims=1)
        return {
            "selected": selected,
            "unit_ids": unit_ids,
            "unit_num_tokens": unit_num_tokens,
            "unit_num_words": unit_num_words,
            "unit_first_position": unit_first_position,
            "unit_last_position": unit_last_position,
        }

    def _select_tokens(self, maskable: tf.Tensor, order_seed: tf.Tensor, rounding_seed: tf.Tensor) -> dict:
        """`select` for single tokens: one `top_k` instead of sorting units (same distribution)."""
        shape = tf.shape(maskable)
        priority = tf.where(maskable, tf.random.stateless_uniform(shape, order_seed), -1.0)
        padded = tf.pad(priority, [[0, 0], [0, tf.maximum(self.max_predictions - shape[1], 0)]], constant_values=-1.0)
        top_priorities, _ = tf.math.top_k(padded, k=self.max_predictions, sorted=True)
        num_maskable = tf.reduce_sum(tf.cast(maskable, tf.float32), axis=1, keepdims=True)
        rounding = tf.random.stateless_uniform([shape[0], 1], rounding_seed)
        num_to_take = tf.cast(tf.minimum(tf.floor(self.selection_rate * num_maskable + rounding),
                                         self.max_predictions), tf.int32)
        threshold = tf.gather(top_priorities, tf.maximum(num_to_take - 1, 0), batch_dims=1)
        selected = maskable & (priority >= threshold) & (num_to_take > 0)
        positions = tf.broadcast_to(tf.range(shape[1])[tf.newaxis], shape)
        ones = tf.cast(maskable, tf.int32)
        return {
            "selected": selected,
            "unit_ids": tf.where(maskable, positions, -1),
            "unit_num_tokens": ones,
            "unit_num_words": ones,
            "unit_first_position": positions,
            "unit_last_position": positions,
        }

    def _group_words(
        self, word_starts: tf.Tensor, maskable: tf.Tensor, previous_maskable: tf.Tensor, seed: tf.Tensor
    ) -> tf.Tensor:
        """Cut each run of maskable words into n-grams/spans of random word lengths.

        The words of a sequence are partitioned into consecutive groups whose
        lengths are drawn from the unit-length distribution; a group also ends
        wherever a special token interrupts the run, so no unit crosses `[SEP]`.
        Returns the boolean `[batch, length]` flags of unit starts.
        """
        batch_size, length = tf.shape(word_starts)[0], tf.shape(word_starts)[1]
        word_rank = tf.maximum(tf.cumsum(tf.cast(word_starts, tf.int32), axis=1) - 1, 0)
        log_probs = tf.tile(self._unit_length_log_probs, [batch_size, 1])
        group_sizes = tf.random.stateless_categorical(log_probs, length, seed, dtype=tf.int32) + 1
        group_ends = tf.cumsum(group_sizes, axis=1)
        group_of_word = tf.searchsorted(group_ends, word_rank, side="right")
        new_group = tf.not_equal(group_of_word, _shift_right(group_of_word, -1))
        run_starts = maskable & tf.logical_not(previous_maskable)
        return run_starts | (word_starts & new_group)

    def _corrupt(self, token_ids: tf.Tensor, selection: Mapping[str, tf.Tensor], seed: tf.Tensor) -> dict:
        decision_seed, random_token_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
        selected, unit_ids = selection["selected"], selection["unit_ids"]
        length = tf.shape(token_ids)[1]

        decision = tf.random.stateless_uniform(tf.shape(token_ids), decision_seed)
        if self.replace_whole_units:
            decision = tf.gather(decision, tf.maximum(unit_ids, 0), batch_dims=1)
        use_mask = selected & (decision < self.mask_token_rate)
        use_random = selected & (decision >= self.mask_token_rate) & (
            decision < self.mask_token_rate + self.random_token_rate
        )
        random_index = tf.random.stateless_uniform(
            tf.shape(token_ids), random_token_seed, maxval=tf.size(self._random_token_ids), dtype=tf.int32
        )
        random_tokens = tf.gather(self._random_token_ids, random_index)
        corrupted = tf.where(use_mask, self.mask_id, tf.where(use_random, random_tokens, token_ids))

        # The first `max_predictions` selected positions in ascending order:
        # top_k over (length - position) of the selected positions.
        position_keys = tf.where(selected, length - tf.range(length)[tf.newaxis], 0)
        position_keys = tf.pad(position_keys, [[0, 0], [0, tf.maximum(self.max_predictions - length, 0)]])
        top_keys, _ = tf.math.top_k(position_keys, k=self.max_predictions, sorted=True)
        valid = top_keys > 0
        masked_positions = tf.where(valid, length - top_keys, 0)
        zeros = tf.zeros_like(masked_positions)
        outputs = {
            "token_ids": corrupted,
            "masked_positions": masked_positions,
            "masked_ids": tf.where(valid, tf.gather(token_ids, masked_positions, batch_dims=1), zeros),
            "masked_weights": tf.cast(valid, tf.float32),
        }
        if self.unit == "span":
            slot_units = tf.maximum(tf.gather(unit_ids, masked_positions, batch_dims=1), 0)
            first = tf.gather(selection["unit_first_position"], slot_units, batch_dims=1)
            last = tf.gather(selection["unit_last_position"], slot_units, batch_dims=1)
            outputs["span_left_positions"] = tf.where(valid, first - 1, zeros)
            outputs["span_right_positions"] = tf.where(valid, tf.minimum(last + 1, length - 1), zeros)
            outputs["span_offsets"] = tf.where(valid, masked_positions - first + 1, zeros)
        return outputs


def mask_dataset(
    dataset: tf.data.Dataset,
    masker: MaskedLMMasker,
    seed: int | None = None,
    num_parallel_calls: int = tf.data.AUTOTUNE,
) -> tf.data.Dataset:
    """Apply `masker` to every element with a fresh seed per element and per epoch.

    The seeds come from `tf.data.Dataset.random(seed, rerandomize_each_iteration=True)`:
    with an integer `seed` the whole sequence of masks repeats exactly run
    after run (epoch 1 of run A equals epoch 1 of run B), while each new
    iteration over the dataset (the next epoch) masks differently.

    >>> from tfbert.text import WordPieceTokenizer
    >>> masker = MaskedLMMasker.for_tokenizer(WordPieceTokenizer("vocab.txt"), max_predictions=2)
    >>> packed_batches = tf.data.Dataset.from_tensors({"token_ids": [[101, 7592, 2088, 102]], "padding_mask": [[1, 1, 1, 1]]})
    >>> masked = mask_dataset(packed_batches, masker, seed=42)
    >>> sorted(next(iter(masked)))
    ['masked_ids', 'masked_positions', 'masked_weights', 'padding_mask', 'token_ids']
    """
    seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)
    return tf.data.Dataset.zip((dataset, seeds)).map(
        lambda features, element_seed: masker(features, seed=element_seed),
        num_parallel_calls=num_parallel_calls,
        deterministic=True,
    )


def _as_seed(seed: tf.Tensor | Sequence[int] | None) -> tf.Tensor:
    if seed is None:
        seed = tf.random.uniform([2], maxval=tf.int32.max, dtype=tf.int32)
    return tf.cast(tf.convert_to_tensor(seed), tf.int64)


def _shift_right(values: tf.Tensor, fill) -> tf.Tensor:
    """`values[:, i - 1]` at column i, with `fill` in column 0."""
    first = tf.fill([tf.shape(values)[0], 1], tf.constant(fill, values.dtype))
    return tf.concat([first, values[:, :-1]], axis=1)


class _UnitReducer:
    """Per-unit sums, minima and maxima of `[batch, length]` values, as `[batch, length]` by unit id."""

    def __init__(self, unit_ids: tf.Tensor, batch_size: tf.Tensor, length: tf.Tensor):
        rows = tf.range(batch_size)[:, tf.newaxis] * length
        self._num_segments = batch_size * length + 1
        # Positions outside any unit go to one extra segment that is dropped.
        self._segment_ids = tf.where(unit_ids >= 0, unit_ids + rows, self._num_segments - 1)
        self._shape = tf.shape(unit_ids)

    def _reduce(self, op, values: tf.Tensor) -> tf.Tensor:
        reduced = op(values, self._segment_ids, self._num_segments)
        return tf.reshape(reduced[:-1], self._shape)

    def sum(self, values: tf.Tensor) -> tf.Tensor:
        return self._reduce(tf.math.unsorted_segment_sum, values)

    def min(self, values: tf.Tensor) -> tf.Tensor:
        return self._reduce(tf.math.unsorted_segment_min, values)

    def max(self, values: tf.Tensor) -> tf.Tensor:
        return self._reduce(tf.math.unsorted_segment_max, values)
