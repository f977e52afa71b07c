"""WordPieceTokenizer: ids equal Hugging Face `tokenizers` (MiniLM tokenizer.json) on real text."""

import numpy as np
import pytest
import tensorflow as tf
from text_cases import HARD_STRINGS, as_text, batched

from tfbert.text import WordPieceTokenizer


def assert_same_ids(tokenizer, reference, texts, batch_size=2048):
    mismatches = []
    for batch in batched(texts, batch_size):
        got = tokenizer.tokenize(tf.constant(batch)).to_list()
        decoded = [as_text(t) if isinstance(t, bytes) else t for t in batch]
        expected = [encoding.ids for encoding in reference.encode_batch(decoded, add_special_tokens=False)]
        mismatches += [(text, want, have) for text, want, have in zip(batch, expected, got) if want != have]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ, first: {mismatches[:3]}"


def test_wikipedia_lines_exact(wordpiece, hf_minilm, wiki_lines):
    assert len(wiki_lines) > 25_000
    assert_same_ids(wordpiece, hf_minilm, wiki_lines)


def test_botchan_and_korean_exact(wordpiece, hf_minilm, botchan_lines, korean_lines):
    assert_same_ids(wordpiece, hf_minilm, botchan_lines + korean_lines)


def test_hard_strings_exact(wordpiece, hf_minilm):
    assert_same_ids(wordpiece, hf_minilm, HARD_STRINGS)
    # Each string alone, and every hard string glued to plain text, to exercise both internal paths.
    for text in HARD_STRINGS:
        assert_same_ids(wordpiece, hf_minilm, [text, b"plain words " + text + b" more plain words"])


def test_cased_matches_reference_without_lowercasing(assets, hf_minilm, wiki_lines):
    from tokenizers import normalizers

    cased = WordPieceTokenizer(assets("minilm/vocab.txt"), lowercase=False)
    hf_minilm_cased = type(hf_minilm).from_str(hf_minilm.to_str())
    hf_minilm_cased.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False)
    hf_minilm_cased.encode_special_tokens = True
    assert_same_ids(cased, hf_minilm_cased, wiki_lines[:5000] + HARD_STRINGS)


def test_special_tokens_and_lookups(wordpiece):
    assert (wordpiece.pad_id, wordpiece.unk_id, wordpiece.cls_id, wordpiece.sep_id, wordpiece.mask_id) == (0, 100, 101, 102, 103)
    assert wordpiece.bos_id is None and wordpiece.eos_id is None
    assert wordpiece.special_token_ids() == [0, 100, 101, 102, 103]
    assert wordpiece.vocabulary_size() == 30522 == len(wordpiece.vocabulary())
    assert wordpiece.token_to_id("hello") == 7592
    assert wordpiece.id_to_token(7592) == "hello"
    assert wordpiece.token_to_id(tf.constant(["hello", "notatoken!"])).numpy().tolist() == [7592, -1]
    assert wordpiece.id_to_token(tf.constant([101, 102])).numpy().tolist() == [b"[CLS]", b"[SEP]"]


def test_special_token_text_is_not_special(wordpiece):
    ids = wordpiece.tokenize("[SEP]").numpy().tolist()
    assert wordpiece.sep_id not in ids


def test_shapes_scalar_and_empty(wordpiece):
    assert wordpiece.tokenize("hello world").numpy().tolist() == [7592, 2088]
    empty = wordpiece.tokenize(tf.constant([], tf.string))
    assert empty.shape[0] == 0
    assert wordpiece.tokenize(["", "  "]).to_list() == [[], []]


def test_offsets_slice_to_token_text(wordpiece, wiki_lines):
    lines = [line for line in wiki_lines[:3000] if line.isascii()][:1000] + ["Naïve café, Ünïcode straße 中文 ok"]
    ids, starts, ends = wordpiece.tokenize_with_offsets(tf.constant(lines))
    checked = 0
    for line, row_ids, row_starts, row_ends in zip(lines, ids.to_list(), starts.to_list(), ends.to_list()):
        data = line.encode()
        for token_id, start, end in zip(row_ids, row_starts, row_ends):
            token = wordpiece.id_to_token(token_id)
            if token == "[UNK]":
                continue
            piece = data[start:end].decode("utf-8").lower()
            if piece.isascii():
                assert piece == token.removeprefix("##"), (line, token, piece)
                checked += 1
    assert checked > 40_000


def test_offsets_of_accented_words_span_the_word(wordpiece):
    text = "Naïve résumé"
    ids, starts, ends = wordpiece.tokenize_with_offsets(text)
    data = text.encode()
    assert data[starts[0] : ends[-1]] == data
    assert data[int(starts[0]) : int(ends[0])].decode().lower().startswith("na")


def test_detokenize(wordpiece):
    ids = wordpiece.tokenize(["Hello, unaffable world!", "tokenization"])
    assert wordpiece.detokenize(ids).numpy().tolist() == [b"hello , unaffable world !", b"tokenization"]
    assert wordpiece.detokenize(ids[1]).numpy() == b"tokenization"


def test_bad_input_never_crashes(wordpiece):
    rng = np.random.default_rng(0)
    blobs = [rng.integers(0, 256, size=int(n), dtype=np.uint8).tobytes() for n in rng.integers(0, 400, size=200)]
    ids = wordpiece.tokenize(tf.constant(blobs))
    assert ids.shape[0] == 200
    assert int(tf.reduce_min(ids.flat_values)) >= 0


def test_one_megabyte_string(wordpiece, hf_minilm, botchan_lines):
    text = ("\n".join(botchan_lines) + " ")[:1_000_000]
    ids = wordpiece.tokenize(text).numpy().tolist()
    assert ids == hf_minilm.encode(text, add_special_tokens=False).ids


def _table_code_points(*tables):
    """The code points of tfbert's generated character tables, without the private-use planes."""
    return sorted({c for table in tables for first, last in table for c in range(first, min(last, 0xEFFFF) + 1)})


def _cased_code_points():
    from tfbert.text import _bert_character_classes as classes
    from tfbert.text import _wordpiece_unsafe_chars as unsafe

    return _table_code_points(classes.PUNCTUATION, classes.DROPPED, classes.COMBINING_MARKS, unsafe.UNSAFE_WHEN_CASED)


# Uncased (the default) over all of Unicode; cased over every code point a character table names (what
# casing changes is the case folding and accent stripping, which the uncased run and the tables' own
# tests cover), about 10,000.
@pytest.mark.slow
@pytest.mark.parametrize("lowercase, code_points", [
    (True, lambda: [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]),
    (False, _cased_code_points),
], ids=["uncased", "cased"])
def test_every_code_point(assets, hf_minilm, lowercase, code_points):
    """Code points in four contexts give Hugging Face's ids, including those whose category differs
    between `tokenizers`' Unicode tables and newer ones (U+11660)."""
    from tokenizers import Tokenizer, normalizers

    wordpiece = WordPieceTokenizer(assets("minilm/vocab.txt"), lowercase=lowercase)
    reference = Tokenizer.from_str(hf_minilm.to_str())
    reference.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                      strip_accents=lowercase, lowercase=lowercase)
    reference.encode_special_tokens = True
    texts = [f"a{chr(c)}b X{chr(c)} {chr(c)}Q {chr(c)}{chr(c)}" for c in code_points()]
    differing = []
    for batch in batched(texts, 20_000):
        got = wordpiece.tokenize(tf.constant([t.encode() for t in batch])).to_list()
        want = [e.ids for e in reference.encode_batch(batch, add_special_tokens=False)]
        differing += [ord(t[1]) for t, a, b in zip(batch, want, got) if a != b]
    assert differing == [], [hex(c) for c in differing[:50]]
