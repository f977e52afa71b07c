"""Property tests: on arbitrary Unicode, every tokenizer gives the reference library's ids and offsets.

Hypothesis draws batches of strings made of controls, NUL, combining marks, right-to-left scripts,
emoji, very long words and now and then a 10,000-character string. Each tokenizer runs through one
traced `tf.function` (the graph a SavedModel holds), built once per module, so examples are cheap.
What "the offsets are right" means per kind (docs/tokenizers.md, "Exactness, as tested"):

- WordPiece: each token's byte span equals Hugging Face `tokenizers`' `offsets` (characters,
  converted to bytes): from the first to the last input character the token's normalized text
  came from, so a dropped control inside a word (`lord\\x01said`) belongs to the token around it.
- SentencePiece: each piece's byte span equals sentencepiece's `begin`/`end` (into the input,
  before NFKC).
- Byte-level BPE: tokens tile the input, so each span holds exactly the token's bytes.

Each kind runs cased and uncased where it has both: WordPiece (MiniLM's uncased vocabulary, read cased
against `tokenizers` with `lowercase=False`), SentencePiece (`lowercase=True` against sentencepiece on
`text.lower()`, as ALBERT's tokenizer lowercases before it); byte-level BPE has no uncased form.
"""

import itertools

import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfbert.text import SentencePieceTokenizer

EXAMPLES = 500
PROPERTY_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# The other casing of each kind: the same inputs, fewer examples (the tokenizer code is shared but the casing step).
OTHER_CASING_SETTINGS = settings(PROPERTY_SETTINGS, max_examples=100)

FRAGMENTS = [
    "\x00", "\x01", "\x7f", "\x85", "\t", "\n", "\r\n", " ", "\u00a0", "\u200b", "\u200d", "\ufeff", "\u00ad",
    "\u0301", "\u0308", "\u0327", "e\u0301", "\u1fef", "ｶﾞ", "İ", "ß", "Σ", "ﬁ", "²", "Ⅷ", "ｶ", "ｱ", "한", "\u1112\u1161\u11ab",
    "مرحبا", "שָׁלוֹם", "\u202e", "\u200f", "😀", "👨‍👩‍👧", "👍🏽", "🇺🇸", "東京", "\U00020000", "\ue000",
    "lord", "said", "the", "I", "don't", "...", "$100", "▁", "[SEP]", "<unk>", "a" * 120, "abc" * 40,
]
_CHARACTER = st.characters(codec="utf-8")
_PIECE = st.one_of(st.sampled_from(FRAGMENTS), st.text(_CHARACTER, max_size=6), st.sampled_from(FRAGMENTS))
_TEXT = st.lists(_PIECE, max_size=12).map("".join)
_LONG_TEXT = st.builds(lambda text: (text * (10_000 // max(len(text), 1) + 1))[:10_000], _TEXT.filter(bool))
# Mostly short strings; a 10,000-character one in about one example of twenty.
BATCHES = st.integers(0, 19).flatmap(
    lambda draw: st.lists(_LONG_TEXT, min_size=1, max_size=1) if draw == 0 else st.lists(_TEXT, min_size=1, max_size=4))


def _traced(tokenizer):
    return tf.function(tokenizer.tokenize_with_offsets, input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)


def _rows(traced, texts):
    ids, starts, ends = traced(tf.constant([text.encode() for text in texts]))
    return [list(zip(*row)) for row in zip(ids.to_list(), starts.to_list(), ends.to_list())]


def _byte_offsets(text: str) -> list[int]:
    """Byte offset of each character offset of `text` (and of its end)."""
    return [0, *itertools.accumulate(len(character.encode()) for character in text)]


@pytest.fixture(scope="module")
def traced_wordpiece(wordpiece):
    return _traced(wordpiece)


@PROPERTY_SETTINGS
@given(texts=BATCHES)
def test_wordpiece_ids_and_offsets_equal_huggingface(traced_wordpiece, hf_minilm, texts):
    for text, got in zip(texts, _rows(traced_wordpiece, texts)):
        encoding, at_byte = hf_minilm.encode(text, add_special_tokens=False), _byte_offsets(text)
        want = [(i, at_byte[start], at_byte[end]) for i, (start, end) in zip(encoding.ids, encoding.offsets)]
        assert got == want, ascii(text[:300])


@pytest.fixture(scope="module", params=["botchan_en_unigram_1000", "botchan_en_bpe_1000"])
def sentencepiece_pair(request, assets):
    import sentencepiece

    path = assets(f"spm/{request.param}.model")
    return _traced(SentencePieceTokenizer(path)), sentencepiece.SentencePieceProcessor(model_file=str(path))


@PROPERTY_SETTINGS
@given(texts=BATCHES)
def test_sentencepiece_ids_and_offsets_equal_sentencepiece(sentencepiece_pair, texts):
    traced, processor = sentencepiece_pair
    for text, got in zip(texts, _rows(traced, texts)):
        want = [(p.id, p.begin, p.end) for p in processor.encode(text, return_type="proto").pieces]
        assert got == want, ascii(text[:300])


@pytest.fixture(scope="module")
def traced_byte_pair(gpt2_bpe):
    return _traced(gpt2_bpe)


@PROPERTY_SETTINGS
@given(texts=BATCHES)
def test_byte_pair_ids_equal_tiktoken_and_tokens_tile_the_input(traced_byte_pair, tiktoken_gpt2, texts):
    for text, got in zip(texts, _rows(traced_byte_pair, texts)):
        ids = tiktoken_gpt2.encode_ordinary(text)
        ends = list(itertools.accumulate(len(tiktoken_gpt2.decode_single_token_bytes(token)) for token in ids))
        assert got == list(zip(ids, [0] + ends[:-1], ends)), text


@pytest.fixture(scope="module")
def cased_wordpiece_pair(assets, hf_minilm):
    from tokenizers import Tokenizer, normalizers

    from tfbert.text import WordPieceTokenizer

    reference = Tokenizer.from_str(hf_minilm.to_str())
    reference.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False,
                                                      lowercase=False)
    reference.encode_special_tokens = True
    return _traced(WordPieceTokenizer(assets("minilm/vocab.txt"), lowercase=False)), reference


@OTHER_CASING_SETTINGS
@given(texts=BATCHES)
def test_cased_wordpiece_ids_and_offsets_equal_huggingface(cased_wordpiece_pair, texts):
    traced, reference = cased_wordpiece_pair
    for text, got in zip(texts, _rows(traced, texts)):
        encoding, at_byte = reference.encode(text, add_special_tokens=False), _byte_offsets(text)
        want = [(i, at_byte[start], at_byte[end]) for i, (start, end) in zip(encoding.ids, encoding.offsets)]
        assert got == want, ascii(text[:300])


@pytest.fixture(scope="module")
def uncased_sentencepiece_pair(assets):
    import sentencepiece

    path = assets("spm/botchan_en_unigram_1000.model")
    return (_traced(SentencePieceTokenizer(path, lowercase=True)),
            sentencepiece.SentencePieceProcessor(model_file=str(path)))


@OTHER_CASING_SETTINGS
@given(texts=BATCHES)
def test_uncased_sentencepiece_equals_sentencepiece_on_the_lowercased_text(uncased_sentencepiece_pair, texts):
    traced, processor = uncased_sentencepiece_pair
    for text, got in zip(texts, _rows(traced, texts)):
        want = [(p.id, p.begin, p.end) for p in processor.encode(text.lower(), return_type="proto").pieces]
        assert got == want, ascii(text[:300])


@pytest.mark.parametrize("lowercase", [False, True], ids=["cased", "uncased"])
def test_sentencepiece_keeps_the_text_after_a_nul_in_both_casings(assets, lowercase):
    import sentencepiece

    path = assets("spm/botchan_en_unigram_1000.model")
    text = "Hello\x00world of fortunes"
    ids = SentencePieceTokenizer(path, lowercase=lowercase).tokenize([text]).to_list()[0]
    reference = sentencepiece.SentencePieceProcessor(model_file=str(path))
    assert ids == reference.encode(text.lower() if lowercase else text) and len(ids) > 10
