"""WordPieceTokenizer's two internal paths: both exact on their own, and the table that routes
between them is what the code points say it is."""

import pytest
import tensorflow as tf
import tensorflow_text as tf_text
from text_cases import HARD_STRINGS, as_text, batched

from tfbert.text import WordPieceTokenizer
from tfbert.text import _wordpiece_unsafe_chars as tables
from tfbert.text.wordpiece_tokenizer import bert_normalize


@pytest.mark.parametrize("with_offsets", [False, True])
def test_general_path_alone_is_exact(wordpiece, hf_minilm, wiki_lines, korean_lines, with_offsets):
    texts = wiki_lines[:6000] + korean_lines[:1000] + HARD_STRINGS
    got = wordpiece._general(tf.constant(texts), with_offsets)[0].to_list()
    decoded = [as_text(t) if isinstance(t, bytes) else t for t in texts]
    want = [e.ids for e in hf_minilm.encode_batch(decoded, add_special_tokens=False)]
    assert sum(a != b for a, b in zip(want, got)) == 0


def test_fast_path_alone_is_exact_on_fast_strings(wordpiece, hf_minilm, wiki_lines):
    texts = tf.constant(wiki_lines[:6000])
    routed_fast = tf.strings.regex_full_match(texts, wordpiece._fast_path_text) & ~tf.strings.regex_full_match(texts, wordpiece._long_run)
    fast_texts = tf.boolean_mask(texts, routed_fast)
    assert fast_texts.shape[0] > 5500
    got = wordpiece._fast(fast_texts, False)[0].to_list()
    want = [e.ids for e in hf_minilm.encode_batch([t.decode() for t in fast_texts.numpy()], add_special_tokens=False)]
    assert got == want


def unsafe_code_points(vocab_file, lowercase):
    """Code points where TF-Text's fast path and the exact path disagree, in a few contexts, either in
    ids (MiniLM vocabulary) or in the normalized text (which makes the table vocabulary-independent)."""
    exact = WordPieceTokenizer(vocab_file, lowercase=lowercase)
    normalizer = tf_text.FastBertNormalizer(lower_case_nfd_strip_accents=lowercase)
    fast_tokenizer = tf_text.FastWordpieceTokenizer(
        vocab=exact.vocabulary(), token_out_type=tf.int32, no_pretokenization=False, unknown_token="[UNK]", max_bytes_per_word=400
    )
    fast = tf.function(lambda s: fast_tokenizer.tokenize(normalizer.normalize(s)))
    general = tf.function(lambda s: exact._general(s, False)[0])
    without_spaces = lambda s: tf.strings.regex_replace(s, r"[\t\n\r ]", "")  # noqa: E731
    same_text = tf.function(lambda s: without_spaces(normalizer.normalize(s)) == without_spaces(bert_normalize(s, lowercase)))
    code_points = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    unsafe = []
    for chunk in batched(code_points, 20_000):
        contexts = tf.constant([f"a{chr(c)}b X{chr(c)} {chr(c)}Q {chr(c)}{chr(c)}".encode() for c in chunk])
        alone = tf.constant([chr(c).encode() for c in chunk])
        same = same_text(alone).numpy()
        for c, a, b, s in zip(chunk, fast(contexts).to_list(), general(contexts).to_list(), same):
            if a != b or not s:
                unsafe.append(c)
    return unsafe


def as_ranges(code_points):
    ranges = []
    for c in code_points:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return tuple(ranges)


@pytest.mark.slow
@pytest.mark.parametrize("lowercase", [True, False])
def test_unsafe_character_tables(assets, lowercase):
    table = tables.UNSAFE_WHEN_LOWERCASING if lowercase else tables.UNSAFE_WHEN_CASED
    assert as_ranges(unsafe_code_points(assets("minilm/vocab.txt"), lowercase)) == table
