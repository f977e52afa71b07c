"""XLM data: streams, TLM pairs and p^alpha language sampling."""

import numpy as np
import pytest
import tensorflow as tf

from tfbert.data import MaskedLMMasker
from tfbert.families.xlm.streams import (
    language_sampling_probabilities,
    pack_translation_pairs,
    sample_languages,
    stream_chunks,
    stream_examples,
    tlm_dataset,
)


@pytest.mark.parametrize("alpha", [0.5, 0.3])
def test_sampling_frequencies_follow_p_to_the_alpha(alpha):
    sizes = [1_000_000, 100_000, 10_000]
    expected = np.array(sizes, float) ** alpha / np.sum(np.array(sizes, float) ** alpha)
    np.testing.assert_allclose(language_sampling_probabilities(sizes, alpha), expected)
    languages = [tf.data.Dataset.from_tensors(tf.constant(i)) for i in range(3)]
    draws = np.array(list(sample_languages(languages, sizes, alpha=alpha, seed=0).take(20_000).as_numpy_iterator()))
    frequencies = np.bincount(draws, minlength=3) / draws.size
    # 20,000 draws: the standard error of each frequency is below 0.0036.
    np.testing.assert_allclose(frequencies, expected, atol=0.012)


def test_sampling_rejects_bad_sizes():
    with pytest.raises(ValueError, match="positive"):
        language_sampling_probabilities([10, 0], 0.5)


def test_streams_run_on_across_documents_in_exact_chunks():
    documents = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[[5, 6], [7]], [[8, 9, 10, 11]], [[12]]]))
    chunks = [c.tolist() for c in stream_chunks(documents, sequence_length=4, separator_id=1).as_numpy_iterator()]
    assert chunks == [[5, 6, 1, 7], [1, 8, 9, 10], [11, 1, 12, 1]]


def test_stream_examples_carry_one_language_and_plain_positions():
    documents = tf.data.Dataset.from_tensors(tf.constant(["a b c d e f g h"]))
    tokenize = lambda text: tf.strings.to_hash_bucket_fast(tf.strings.split(text), 50) + 10  # noqa: E731
    (example,) = list(stream_examples(documents, tokenize, language_id=1, sequence_length=3, separator_id=2))[:1]
    assert example["language_ids"].numpy().tolist() == [1, 1, 1]
    assert example["position_ids"].numpy().tolist() == [0, 1, 2]
    assert example["padding_mask"].numpy().tolist() == [1, 1, 1]


def test_translation_pairs_restart_positions_and_switch_languages():
    packed = pack_translation_pairs(tf.ragged.constant([[11, 12, 13]]), tf.ragged.constant([[21, 22]]),
                                    sequence_length=10, start_id=1, separator_id=2, pad_id=0, language_ids=(3, 4))
    assert packed["token_ids"].numpy().tolist() == [[1, 11, 12, 13, 2, 2, 21, 22, 2, 0]]
    assert packed["segment_ids"].numpy().tolist() == [[0, 0, 0, 0, 0, 1, 1, 1, 1, 0]]
    assert packed["position_ids"].numpy().tolist() == [[0, 1, 2, 3, 4, 0, 1, 2, 3, 9]]
    assert packed["language_ids"].numpy().tolist() == [[3, 3, 3, 3, 3, 4, 4, 4, 4, 3]]
    assert packed["padding_mask"].numpy().tolist() == [[1, 1, 1, 1, 1, 1, 1, 1, 1, 0]]


class _ToyTokenizer:
    cls_id, sep_id, pad_id, mask_id = 1, 2, 0, 3

    def tokenize(self, text):
        return tf.strings.to_hash_bucket_fast(tf.strings.split(text), 90) + 10


def test_tlm_batches_mask_both_languages():
    pairs = tf.data.Dataset.from_tensors((tf.constant("a b c d e f g h"), tf.constant("u v w x y z q r"))).repeat(64)
    masker = MaskedLMMasker(vocabulary_size=100, mask_id=3, special_token_ids=[0, 1, 2, 3], max_predictions=6)
    batches = tlm_dataset(pairs, _ToyTokenizer(), masker=masker, sequence_length=24, batch_size=16, seed=0)
    sides = []
    for batch in batches:
        positions = batch["masked_positions"].numpy()
        weights = batch["masked_weights"].numpy() > 0
        segments = np.take_along_axis(batch["segment_ids"].numpy(), positions, axis=1)
        sides.extend(segments[weights].tolist())
        assert batch["token_ids"].shape == (16, 24)
    assert 0.3 < np.mean(sides) < 0.7  # masked tokens are spread over both sentences
