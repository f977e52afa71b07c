"""SegmentPacker: hand-checked layouts, truncation modes and static shapes."""

import numpy as np
import pytest
import tensorflow as tf

from tfbert.data.packing import SegmentPacker, num_special_tokens, pair_lengths

CLS, SEP, PAD = 101, 102, 0
BOS, EOS, RPAD = 0, 2, 1


def ragged(rows):
    return tf.ragged.constant(rows, dtype=tf.int32)


def pack(packer, *segments):
    out = packer([ragged(s) for s in segments])
    return {key: value.numpy().tolist() for key, value in out.items()}


def test_bert_pair_fits_without_truncation():
    out = pack(SegmentPacker(10, CLS, SEP, PAD, style="bert"), [[1, 2, 3]], [[4, 5]])
    assert out["token_ids"] == [[CLS, 1, 2, 3, SEP, 4, 5, SEP, PAD, PAD]]
    assert out["segment_ids"] == [[0, 0, 0, 0, 0, 1, 1, 1, 0, 0]]
    assert out["padding_mask"] == [[1, 1, 1, 1, 1, 1, 1, 1, 0, 0]]


def test_bert_round_robin_takes_turns():
    # Budget 10 - 3 = 7: round robin gives 4 + 3 to lengths 6 and 5.
    out = pack(SegmentPacker(10, CLS, SEP, PAD, style="bert", truncation="round_robin"), [[1, 2, 3, 4, 5, 6]], [[7, 8, 9, 10, 11]])
    assert out["token_ids"] == [[CLS, 1, 2, 3, 4, SEP, 7, 8, 9, SEP]]
    assert out["segment_ids"] == [[0, 0, 0, 0, 0, 0, 1, 1, 1, 1]]


def test_bert_longest_first_trims_the_longer_segment():
    # Budget 10 - 3 = 7 for lengths 8 and 2: all of the short segment stays (both modes).
    for truncation in ("longest_first", "round_robin"):
        out = pack(SegmentPacker(10, CLS, SEP, PAD, style="bert", truncation=truncation), [[1, 2, 3, 4, 5, 6, 7, 8]], [[9, 10]])
        assert out["token_ids"] == [[CLS, 1, 2, 3, 4, 5, SEP, 9, 10, SEP]]


def test_truncation_modes_on_nearly_equal_lengths():
    # Lengths 6 and 5, budget 7. Round robin hands out tokens a, b, a, b, ...: 4 + 3.
    # Longest-first as Hugging Face: both cut to half the budget, the longer one keeps the odd token: 4 + 3.
    segments = ([[1, 2, 3, 4, 5, 6]], [[7, 8, 9, 10, 11]])
    rr = pack(SegmentPacker(10, CLS, SEP, PAD, style="bert", truncation="round_robin"), *segments)
    lf = pack(SegmentPacker(10, CLS, SEP, PAD, style="bert", truncation="longest_first"), *segments)
    assert rr["token_ids"] == [[CLS, 1, 2, 3, 4, SEP, 7, 8, 9, SEP]]
    assert lf["token_ids"] == [[CLS, 1, 2, 3, 4, SEP, 7, 8, 9, SEP]]
    assert lf["segment_ids"] == [[0, 0, 0, 0, 0, 0, 1, 1, 1, 1]]
    # Equal lengths 5 and 5, budget 7: the second (on a tie, "the longer") keeps the odd token.
    tie = pack(SegmentPacker(10, CLS, SEP, PAD, style="bert"), [[1, 2, 3, 4, 5]], [[7, 8, 9, 10, 11]])
    assert tie["token_ids"] == [[CLS, 1, 2, 3, SEP, 7, 8, 9, 10, SEP]]


def test_longest_first_keeps_what_hugging_face_tokenizers_keeps():
    """Every pair of lengths up to 12 in budgets 1 to 13: the lengths `tokenizers`' longest_first keeps."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({f"w{i}": i for i in range(13)} | {"[UNK]": 13}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    cases = [(n1, n2, budget) for n1 in range(13) for n2 in range(13) for budget in range(1, 14)]
    expected = []
    for n1, n2, budget in cases:
        tokenizer.enable_truncation(budget, strategy="longest_first")
        kept = tokenizer.encode(" ".join(f"w{i}" for i in range(n1)), " ".join(f"w{i}" for i in range(n2)))
        expected.append((kept.sequence_ids.count(0), kept.sequence_ids.count(1)))
    ours = []
    for budget in range(1, 14):
        rows = [(n1, n2) for n1, n2, b in cases if b == budget]
        first, second = pair_lengths(tf.constant([n for n, _ in rows]), tf.constant([n for _, n in rows]), budget)
        ours += list(zip(first.numpy().tolist(), second.numpy().tolist()))
    by_budget = sorted(cases, key=lambda case: case[2])
    assert dict(zip(by_budget, ours)) == dict(zip(cases, expected))


def test_three_segments():
    # Budget 9 - 4 = 5 for lengths 4, 4, 1: both modes keep 2, 2, 1.
    segments = ([[1, 2, 3, 4]], [[5, 6, 7, 8]], [[9]])
    for truncation in ("longest_first", "round_robin"):
        out = pack(SegmentPacker(9, CLS, SEP, PAD, style="bert", truncation=truncation), *segments)
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
    out = pack(SegmentPacker(6, CLS, SEP, PAD, style="bert"), [[]], [[]])
    assert out["token_ids"] == [[CLS, SEP, SEP, PAD, PAD, PAD]]


def test_unbatched_input():
    out = SegmentPacker(6, CLS, SEP, PAD, style="bert")([tf.constant([1, 2]), tf.constant([3])])
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
        SegmentPacker(8, CLS, SEP, PAD, style="bert", truncation="waterfall")
    assert num_special_tokens("bert", 3) == 4 and num_special_tokens("roberta", 1) == 2
