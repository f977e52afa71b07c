"""SegmentPacker: hand-checked layouts, truncation modes and static shapes."""

import numpy as np
import pytest
import tensorflow as tf

from tfbert.data.packing import SegmentPacker, num_special_tokens

CLS, SEP, PAD = 101, 102, 0
BOS, EOS, RPAD = 0, 2, 1


def ragged(rows):
    return tf.ragged.constant(rows, dtype=tf.int32)


def pack(packer, *segments):
    out = packer([ragged(s) for s in segments])
    return {key: value.numpy().tolist() for key, value in out.items()}


def test_bert_pair_fits_without_truncation():
    out = pack(SegmentPacker(10, CLS, SEP, PAD), [[1, 2, 3]], [[4, 5]])
    assert out["token_ids"] == [[CLS, 1, 2, 3, SEP, 4, 5, SEP, PAD, PAD]]
    assert out["segment_ids"] == [[0, 0, 0, 0, 0, 1, 1, 1, 0, 0]]
    assert out["padding_mask"] == [[1, 1, 1, 1, 1, 1, 1, 1, 0, 0]]


def test_bert_round_robin_takes_turns():
    # Budget 10 - 3 = 7: round robin gives 4 + 3 to lengths 6 and 5.
    out = pack(SegmentPacker(10, CLS, SEP, PAD, truncation="round_robin"), [[1, 2, 3, 4, 5, 6]], [[7, 8, 9, 10, 11]])
    assert out["token_ids"] == [[CLS, 1, 2, 3, 4, SEP, 7, 8, 9, SEP]]
    assert out["segment_ids"] == [[0, 0, 0, 0, 0, 0, 1, 1, 1, 1]]


def test_bert_longest_first_trims_the_longer_segment():
    # Budget 10 - 3 = 7 for lengths 8 and 2: all of the short segment stays (both modes).
    for truncation in ("longest_first", "round_robin"):
        out = pack(SegmentPacker(10, CLS, SEP, PAD, truncation=truncation), [[1, 2, 3, 4, 5, 6, 7, 8]], [[9, 10]])
        assert out["token_ids"] == [[CLS, 1, 2, 3, 4, 5, SEP, 9, 10, SEP]]


def test_truncation_modes_differ_on_nearly_equal_lengths():
    # Lengths 6 and 5, budget 7. Round robin hands out tokens a, b, a, b, ...: 4 + 3.
    # Longest-first shrinks the longest, the earlier one on ties: 6,5 -> 5,5 -> 4,5 -> 4,4 -> 3,4.
    segments = ([[1, 2, 3, 4, 5, 6]], [[7, 8, 9, 10, 11]])
    rr = pack(SegmentPacker(10, CLS, SEP, PAD, truncation="round_robin"), *segments)
    lf = pack(SegmentPacker(10, CLS, SEP, PAD, truncation="longest_first"), *segments)
    assert rr["token_ids"] == [[CLS, 1, 2, 3, 4, SEP, 7, 8, 9, SEP]]
    assert lf["token_ids"] == [[CLS, 1, 2, 3, SEP, 7, 8, 9, 10, SEP]]
    assert lf["segment_ids"] == [[0, 0, 0, 0, 0, 1, 1, 1, 1, 1]]


def test_three_segments():
    # Budget 9 - 4 = 5 for lengths 4, 4, 1: both modes keep 2, 2, 1.
    segments = ([[1, 2, 3, 4]], [[5, 6, 7, 8]], [[9]])
    for truncation in ("longest_first", "round_robin"):
        out = pack(SegmentPacker(9, CLS, SEP, PAD, truncation=truncation), *segments)
        assert out["token_ids"] == [[CLS, 1, 2, SEP, 5, 6, SEP, 9, SEP]]
        assert out["segment_ids"] == [[0, 0, 0, 0, 1, 1, 1, 2, 2]]


def test_roberta_pair_layout_single_segment_type():
    out = pack(SegmentPacker(10, BOS, EOS, RPAD, style="roberta"), [[5, 6]], [[7, 8]])
    assert out["token_ids"] == [[BOS, 5, 6, EOS, EOS, 7, 8, EOS, RPAD, RPAD]]
    assert out["segment_ids"] == [[0] * 10]
    assert out["padding_mask"] == [[1, 1, 1, 1, 1, 1, 1, 1, 0, 0]]


def test_roberta_truncation_reserves_four_special_tokens():
    out = pack(SegmentPacker(8, BOS, EOS, RPAD, style="roberta", truncation="round_robin"),
               [[5, 6, 7, 8]], [[9, 10, 11]])
    assert out["token_ids"] == [[BOS, 5, 6, EOS, EOS, 9, 10, EOS]]
    out = pack(SegmentPacker(8, BOS, EOS, RPAD, style="roberta", truncation="longest_first"),
               [[5, 6, 7, 8, 9, 10]], [[11]])
    assert out["token_ids"] == [[BOS, 5, 6, 7, EOS, EOS, 11, EOS]]


def test_single_segment_and_empty_second_segment():
    out = pack(SegmentPacker(6, BOS, EOS, RPAD, style="roberta"), [[5, 6, 7, 8, 9]])
    assert out["token_ids"] == [[BOS, 5, 6, 7, 8, EOS]]
    # Empty segments keep their special tokens, so the layout never depends on content.
    out = pack(SegmentPacker(8, BOS, EOS, RPAD, style="roberta"), [[5, 6]], [[]])
    assert out["token_ids"] == [[BOS, 5, 6, EOS, EOS, EOS, RPAD, RPAD]]
    out = pack(SegmentPacker(6, CLS, SEP, PAD), [[]], [[]])
    assert out["token_ids"] == [[CLS, SEP, SEP, PAD, PAD, PAD]]


def test_unbatched_input():
    out = SegmentPacker(6, CLS, SEP, PAD)([tf.constant([1, 2]), tf.constant([3])])
    assert out["token_ids"].numpy().tolist() == [CLS, 1, 2, SEP, 3, SEP]
    assert out["token_ids"].shape == (6,)


@pytest.mark.parametrize("style", ["bert", "roberta"])
@pytest.mark.parametrize("truncation", ["round_robin", "longest_first"])
def test_static_shapes_in_tf_data(style, truncation):
    packer = SegmentPacker(16, CLS, SEP, PAD, style=style, truncation=truncation)
    rows = [[1] * n for n in (0, 3, 30, 7, 100)]
    ds = tf.data.Dataset.from_tensor_slices({"a": tf.ragged.constant(rows), "b": tf.ragged.constant(rows[::-1])})
    ds = ds.batch(5).map(lambda x: packer([x["a"], x["b"]]))
    for name, spec in ds.element_spec.items():
        assert spec.shape.as_list() == [None, 16], name
        assert spec.dtype == tf.int32
    out = next(iter(ds))
    assert np.all(out["token_ids"].numpy()[:, 0] == CLS)


def test_rejects_unknown_options():
    with pytest.raises(ValueError):
        SegmentPacker(8, CLS, SEP, PAD, style="gpt")
    with pytest.raises(ValueError):
        SegmentPacker(8, CLS, SEP, PAD, truncation="waterfall")
    assert num_special_tokens("bert", 3) == 4 and num_special_tokens("roberta", 1) == 2
