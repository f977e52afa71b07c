"""ELECTRA's examples: consecutive text as one segment or as two segments in order, no labels.

ELECTRA (Clark et al., 2020, `build_pretraining_dataset.py`) fills each example with consecutive
sentences of one document; most examples are split into two segments at a sentence boundary
(`[CLS] a [SEP] b [SEP]`, segment ids 0 / 1), some are kept as one (`[CLS] a [SEP]`). There is
no NSP: `b` always really follows `a`. Here the pairs are the SOP pairs of
`tfbert.data.pretraining.pair_examples` put back in order (SOP swaps half of them and says so
in its label), and with probability `single_segment_prob` a pair is joined into one segment.
"""

from __future__ import annotations

import tensorflow as tf

from tfbert.data.packing import SegmentPacker
from tfbert.data.pretraining import pair_examples


def consecutive_segment_examples(
    tokenized_documents: tf.data.Dataset,
    *,
    max_num_tokens: int,
    single_segment_prob: float = 0.1,
    short_seq_prob: float = 0.1,
    seed: int | None = None,
) -> tf.data.Dataset:
    """Tokenized documents -> `{"first", "second"}` consecutive segments (`second` empty for one segment)."""
    pairs = pair_examples(tokenized_documents, objective="sop", max_num_tokens=max_num_tokens,
                          short_seq_prob=short_seq_prob, seed=seed)
    coins = tf.data.Dataset.random(seed=None if seed is None else seed + 2, rerandomize_each_iteration=True)

    def in_order(pair, coin):
        swapped = pair["label"] > 0
        first = tf.cond(swapped, lambda: pair["second"], lambda: pair["first"])
        second = tf.cond(swapped, lambda: pair["first"], lambda: pair["second"])
        single = tf.cast(coin % 1_000_000, tf.float32) / 1_000_000.0 < single_segment_prob
        joined = tf.concat([first, second], 0)
        return {
            "first": tf.cond(single, lambda: joined, lambda: first),
            "second": tf.cond(single, lambda: second[:0], lambda: second),
        }

    return tf.data.Dataset.zip((pairs, coins)).map(in_order, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def pack_one_or_two_segments(packer: SegmentPacker, first: tf.RaggedTensor, second: tf.RaggedTensor) -> dict:
    """`packer([first, second])`, with rows whose `second` is empty packed as one segment.

    The packer would give such a row `[CLS] a [SEP] [SEP]`; the lone second `[SEP]` (the only
    token of segment 1) is turned into padding.
    """
    packed = packer([first, second])
    empty = tf.equal(tf.cast(second.row_lengths(), tf.int32), 0)[:, tf.newaxis]
    lone = empty & (packed["segment_ids"] > 0)
    return {
        "token_ids": tf.where(lone, packer.pad_id, packed["token_ids"]),
        "segment_ids": tf.where(lone, 0, packed["segment_ids"]),
        "padding_mask": tf.where(lone, 0, packed["padding_mask"]),
    }
