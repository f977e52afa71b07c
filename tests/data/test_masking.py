"""MaskedLMMasker on real text: selection statistics, 80/10/10, words, n-grams, spans, seeds."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfbert.data.masking import MaskedLMMasker, mask_dataset
from tfbert.data.word_boundaries import word_start_flags

MAX_PREDICTIONS = 20
SPAN_MAX_PREDICTIONS = 32  # the 15% budget (19 tokens) plus room for one long span


def make_masker(wordpiece, unit="token", max_predictions=MAX_PREDICTIONS, **kwargs):
    return MaskedLMMasker.for_tokenizer(
        wordpiece, max_predictions=max_predictions, unit=unit,
        word_scheme=None if unit == "token" else "wordpiece", **kwargs)


def run_epochs(masker, packed, seed, epochs=1):
    """Mask the packed rows `epochs` times through `mask_dataset`, one dict of arrays per epoch."""
    ds = mask_dataset(tf.data.Dataset.from_tensor_slices(packed).batch(1024), masker, seed=seed)
    results = []
    for _ in range(epochs):
        parts = list(ds.as_numpy_iterator())
        results.append({key: np.concatenate([p[key] for p in parts]) for key in parts[0]})
    return results


def maskable(packed, wordpiece):
    special = np.isin(packed["token_ids"], wordpiece.special_token_ids())
    return (packed["padding_mask"] == 1) & ~special


@pytest.fixture(scope="module")
def token_epochs(wordpiece, packed_real_text):
    return run_epochs(make_masker(wordpiece), packed_real_text, seed=1234, epochs=2)


def test_enough_real_sequences(packed_real_text, token_epochs):
    rows = packed_real_text["token_ids"].shape[0]
    assert rows >= 5000
    assert rows * len(token_epochs) >= 10_000


def test_selection_rate_and_80_10_10(wordpiece, packed_real_text, token_epochs):
    selected = masked_tokens = kept = total_maskable = 0
    for out in token_epochs:
        weights = out["masked_weights"] > 0
        now = np.take_along_axis(out["token_ids"], out["masked_positions"], axis=1)[weights]
        original = out["masked_ids"][weights]
        selected += weights.sum()
        masked_tokens += (now == wordpiece.mask_id).sum()
        kept += (now == original).sum()
        total_maskable += maskable(packed_real_text, wordpiece).sum()
    rate = selected / total_maskable
    mask_share, keep_share = masked_tokens / selected, kept / selected
    random_share = 1 - mask_share - keep_share
    print(f"selection {rate:.4f} mask {mask_share:.4f} random {random_share:.4f} keep {keep_share:.4f} "
          f"over {selected} predictions")
    assert abs(rate - 0.15) < 0.005
    assert abs(mask_share - 0.8) < 0.01
    assert abs(random_share - 0.1) < 0.01
    assert abs(keep_share - 0.1) < 0.01


def test_never_special_or_padding_and_only_selected_change(wordpiece, packed_real_text, token_epochs):
    original = packed_real_text["token_ids"]
    can_mask = maskable(packed_real_text, wordpiece)
    for out in token_epochs:
        weights = out["masked_weights"] > 0
        positions = out["masked_positions"]
        assert np.take_along_axis(can_mask, positions, axis=1)[weights].all()
        assert not np.isin(out["masked_ids"][weights], wordpiece.special_token_ids()).any()
        np.testing.assert_array_equal(np.take_along_axis(original, positions, 1)[weights], out["masked_ids"][weights])
        selected = np.zeros_like(can_mask)
        np.put_along_axis(selected, positions, weights, axis=1)
        unchanged = ~selected
        np.testing.assert_array_equal(out["token_ids"][unchanged], original[unchanged])
        assert (out["masked_weights"].sum(1) <= MAX_PREDICTIONS).all()
        # Padding slots are zero and come after the real ones, positions ascending.
        assert (out["masked_ids"][~weights] == 0).all() and (positions[~weights] == 0).all()
        assert (np.diff(np.where(weights, positions, 10_000 + np.arange(MAX_PREDICTIONS)), axis=1) > 0).all()


def test_seeded_runs_repeat_and_epochs_differ(wordpiece, packed_real_text, token_epochs):
    subset = {key: value[:2048] for key, value in packed_real_text.items()}
    masker = make_masker(wordpiece)
    first = run_epochs(masker, subset, seed=1234)[0]
    again = run_epochs(masker, subset, seed=1234)[0]
    for key in first:
        np.testing.assert_array_equal(first[key], again[key])
        np.testing.assert_array_equal(first[key], token_epochs[0][key][:2048])
    assert not np.array_equal(token_epochs[0]["masked_positions"], token_epochs[1]["masked_positions"])
    unseeded_a = run_epochs(masker, subset, seed=None)[0]
    unseeded_b = run_epochs(masker, subset, seed=None)[0]
    assert not np.array_equal(unseeded_a["masked_positions"], unseeded_b["masked_positions"])
    # A direct call without a seed draws a new one each time.
    batch = {key: tf.constant(value[:64]) for key, value in subset.items()}
    assert not np.array_equal(masker(batch)["masked_positions"], masker(batch)["masked_positions"])


def word_ids(token_ids, can_mask, starts):
    """Per position, the id of the word it belongs to (-1 outside maskable runs)."""
    previous = np.concatenate([np.zeros_like(can_mask[:, :1]), can_mask[:, :-1]], axis=1)
    word_start = can_mask & (starts[token_ids] | ~previous)
    return np.where(can_mask, np.cumsum(word_start, axis=1), -1), word_start


def test_whole_word_masking_never_splits_a_word(wordpiece, packed_real_text):
    masker = make_masker(wordpiece, unit="whole_word")
    out = run_epochs(masker, packed_real_text, seed=5)[0]
    can_mask = maskable(packed_real_text, wordpiece)
    words, _ = word_ids(packed_real_text["token_ids"], can_mask, word_start_flags(wordpiece.vocab, "wordpiece"))
    selected = np.zeros_like(can_mask)
    np.put_along_axis(selected, out["masked_positions"], out["masked_weights"] > 0, axis=1)
    multi_piece_words_masked = 0
    for row in range(selected.shape[0]):
        chosen = np.unique(words[row][selected[row]])
        in_chosen = np.isin(words[row], chosen) & can_mask[row]
        assert (in_chosen == selected[row]).all(), f"row {row} splits a word"
        multi_piece_words_masked += sum((words[row] == w).sum() > 1 for w in chosen)
    rate = selected.sum() / can_mask.sum()
    print(f"whole-word selection rate {rate:.4f}, multi-piece words masked {multi_piece_words_masked}")
    assert multi_piece_words_masked > 1000
    assert abs(rate - 0.15) < 0.005


def unit_lengths(masker, packed, seed):
    """Word counts of the selected units, and the selected fraction of maskable tokens."""
    selection = tf.function(masker.select)(
        tf.constant(packed["token_ids"]), tf.constant(packed["padding_mask"]), tf.constant(seed, tf.int64))
    selection = {key: value.numpy() for key, value in selection.items()}
    selected, units = selection["selected"], selection["unit_ids"]
    rows = np.repeat(np.arange(selected.shape[0])[:, None], selected.shape[1], axis=1)
    chosen = np.unique(np.stack([rows[selected], units[selected]], 1), axis=0)
    lengths = selection["unit_num_words"][chosen[:, 0], chosen[:, 1]]
    rate = selected.sum() / (units >= 0).sum()
    return lengths, rate


def test_ngram_lengths_follow_one_over_n(wordpiece, packed_real_text):
    masker = make_masker(wordpiece, unit="ngram")
    lengths, rate = unit_lengths(masker, packed_real_text, [3, 4])
    shares = np.bincount(lengths, minlength=4)[1:4] / len(lengths)
    expected = np.array([1, 1 / 2, 1 / 3]) / (1 + 1 / 2 + 1 / 3)
    print(f"n-gram shares {np.round(shares, 4)} expected {np.round(expected, 4)} over {len(lengths)}; rate {rate:.4f}")
    assert lengths.max() <= 3
    np.testing.assert_allclose(shares, expected, atol=0.02)
    assert abs(rate - 0.15) < 0.005


def test_span_lengths_geometric_mean(wordpiece, packed_real_text):
    masker = make_masker(wordpiece, unit="span", max_predictions=SPAN_MAX_PREDICTIONS)
    lengths, rate = unit_lengths(masker, packed_real_text, [5, 6])
    print(f"span mean words {lengths.mean():.3f} over {len(lengths)} spans; rate {rate:.4f}")
    assert lengths.max() <= 10
    assert abs(lengths.mean() - 3.8) < 0.2
    assert abs(rate - 0.15) < 0.005


def test_span_boundaries_and_offsets(wordpiece, packed_real_text):
    masker = make_masker(wordpiece, unit="span", max_predictions=SPAN_MAX_PREDICTIONS)
    subset = {key: value[:1024] for key, value in packed_real_text.items()}
    out = run_epochs(masker, subset, seed=9)[0]
    weights = out["masked_weights"] > 0
    for key in ("span_left_positions", "span_right_positions", "span_offsets"):
        assert out[key].shape == (1024, SPAN_MAX_PREDICTIONS)
        assert (out[key][~weights] == 0).all()
    positions, left, right = out["masked_positions"], out["span_left_positions"], out["span_right_positions"]
    offsets = out["span_offsets"]
    assert ((left < positions) & (positions < right))[weights].all()
    np.testing.assert_array_equal(offsets[weights], (positions - left)[weights])
    selected = np.zeros(subset["token_ids"].shape, bool)
    np.put_along_axis(selected, positions, weights, axis=1)
    for row, slot in zip(*np.nonzero(weights)):
        assert selected[row, left[row, slot] + 1:right[row, slot]].all()
    assert (offsets[weights] > 1).mean() > 0.3


def test_static_shapes_and_unbatched_calls(wordpiece):
    masker = make_masker(wordpiece, unit="whole_word")
    ds = tf.data.Dataset.from_tensors({"token_ids": tf.zeros([8, 128], tf.int32),
                                       "padding_mask": tf.zeros([8, 128], tf.int32)}).unbatch().batch(4)
    spec = mask_dataset(ds, masker, seed=0).element_spec
    assert spec["masked_positions"].shape.as_list() == [None, MAX_PREDICTIONS]
    assert spec["token_ids"].shape.as_list() == [None, 128]
    single = masker({"token_ids": tf.constant([wordpiece.cls_id, 2023, 2003, wordpiece.sep_id])}, seed=[1, 1])
    assert single["masked_positions"].shape == (MAX_PREDICTIONS,)
    empty = masker({"token_ids": tf.fill([2, 16], wordpiece.pad_id)}, seed=[1, 2])
    assert float(tf.reduce_sum(empty["masked_weights"])) == 0.0


def test_word_schemes_on_real_vocabularies(assets, wordpiece):
    import sentencepiece

    flags = word_start_flags(wordpiece.vocab, "wordpiece")
    assert flags[wordpiece.vocab.index("play")] and not flags[wordpiece.vocab.index("##ing")]
    processor = sentencepiece.SentencePieceProcessor(model_file=str(assets("spm/botchan_en_unigram_1000.model")))
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    flags = word_start_flags(pieces, "sentencepiece")
    ids = processor.encode("The schoolmaster was surprisingly unreasonable")
    starts = [pieces[i] for i in ids if flags[i]]
    assert len(starts) == 5, [pieces[i] for i in ids]
    assert word_start_flags(["Ġthe", "re", "<s>"], "byte_bpe").tolist() == [True, False, False]
