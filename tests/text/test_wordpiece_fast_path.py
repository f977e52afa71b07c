"""WordPieceTokenizer's two internal paths: both exact on their own, and the table that routes
between them is what the code points say it is."""

import pytest
import tensorflow as tf
import tensorflow_text as tf_text
from text_cases import HARD_STRINGS, as_ranges, as_text, batched

from tfbert.text import WordPieceTokenizer
from tfbert.text import _wordpiece_unsafe_chars as tables
from tfbert.text.wordpiece_tokenizer import (
    _LONG_WORD,
    MAX_CHARS_PER_WORD,
    bert_normalize,
)


@pytest.mark.parametrize("with_offsets", [False, True])
def test_general_path_alone_is_exact(wordpiece, hf_minilm, wiki_lines, korean_lines, with_offsets):
    texts = wiki_lines[:6000] + korean_lines[:1000] + HARD_STRINGS
    got = wordpiece._general(tf.constant(texts), with_offsets)[0].to_list()
    decoded = [as_text(t) if isinstance(t, bytes) else t for t in texts]
    want = [e.ids for e in hf_minilm.encode_batch(decoded, add_special_tokens=False)]
    assert sum(a != b for a, b in zip(want, got)) == 0


def test_fast_path_alone_is_exact_on_fast_strings(wordpiece, hf_minilm, wiki_lines):
    texts = tf.constant(wiki_lines[:6000])
    routed_fast = tf.strings.regex_full_match(texts, wordpiece._fast_path_text) & ~tf.strings.regex_full_match(texts, _LONG_WORD)
    fast_texts = tf.boolean_mask(texts, routed_fast)
    assert fast_texts.shape[0] > 5500
    got = wordpiece._fast(fast_texts, False)[0].to_list()
    want = [e.ids for e in hf_minilm.encode_batch([t.decode() for t in fast_texts.numpy()], add_special_tokens=False)]
    assert got == want


def routed_fast(wordpiece, texts):
    texts = tf.constant(texts)
    return (tf.strings.regex_full_match(texts, wordpiece._fast_path_text) & ~tf.strings.regex_full_match(texts, _LONG_WORD)).numpy().tolist()


# Words at the length limits: 100 characters after normalization for BERT, 400 bytes for the fast path.
# "é" is one character after normalization (two bytes), "각" three (conjoining jamo, MiniLM's vocabulary is NFD);
# runs of 18 or more holding such a character take the general path (the routing test is conservative there).
LONG_WORDS = {
    "x" * 100: True, "x" * 101: False, "é" * 100: True, "é" * 101: False, "ab-" * 60: True,
    "각" * 17: True, "각" * 34: False, "x" * 16 + "각" + "x" * 16: True, "x" * 17 + "각" + "x" * 16: False,
    "각 " + "x" * 34: False, "x" * 34 + " 각": False, "각 " + "x" * 33: True,
}


def test_long_words_route_by_their_normalized_length(wordpiece):
    assert routed_fast(wordpiece, [f"plain {word} text" for word in LONG_WORDS]) == list(LONG_WORDS.values())


def test_long_words_are_exact_on_both_sides_of_the_limits(wordpiece, hf_minilm):
    texts = [f"{word}" for word in LONG_WORDS] + [f"a {word}. b" for word in LONG_WORDS]
    got = wordpiece.tokenize(tf.constant(texts)).to_list()
    assert got == [e.ids for e in hf_minilm.encode_batch(texts, add_special_tokens=False)]
    assert [len(ids) for ids in got[:2]] == [len(hf_minilm.encode("x" * MAX_CHARS_PER_WORD, add_special_tokens=False).ids), 1]


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


@pytest.mark.slow
@pytest.mark.parametrize("lowercase", [True, False])
def test_unsafe_character_tables(assets, lowercase):
    table = tables.UNSAFE_WHEN_LOWERCASING if lowercase else tables.UNSAFE_WHEN_CASED
    assert as_ranges(unsafe_code_points(assets("minilm/vocab.txt"), lowercase)) == table


@pytest.mark.slow
def test_expanding_character_table():
    code_points = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    characters = tf.constant([chr(c).encode() for c in code_points])
    lengths = tf.strings.length(bert_normalize(characters, lowercase=True), unit="UTF8_CHAR").numpy()
    assert max(lengths) == tables.MOST_CHARACTERS_FROM_ONE
    assert as_ranges([c for c, length in zip(code_points, lengths) if length > 1]) == tables.EXPANDING_WHEN_LOWERCASING
