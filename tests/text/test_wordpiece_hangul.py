"""Uncased WordPiece keeps Hangul syllables: in the graph, eagerly, and as Hugging Face's
BertNormalizer does when told not to strip accents."""

import collections

import pytest
import tensorflow as tf

from tfbert.text import WordPieceTokenizer


@pytest.fixture(scope="module")
def korean_sample(korean_lines):
    return korean_lines[:200]


@pytest.fixture(scope="module")
def korean_vocabulary(korean_sample):
    """Special tokens, every character with its ## form, and the 300 most frequent words (lowercased)."""
    text = " ".join(korean_sample).lower()
    characters = sorted({char for char in text if not char.isspace()})
    words = [word for word, _ in collections.Counter(text.split()).most_common(300)]
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + characters + ["##" + char for char in characters] + words
    return list(dict.fromkeys(tokens))


def _hugging_face(vocabulary):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tokenizer = Tokenizer(models.WordPiece({token: i for i, token in enumerate(vocabulary)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tokenizer


def test_uncased_wordpiece_keeps_hangul_syllables_in_graph_and_eagerly(korean_vocabulary, korean_sample):
    tokenizer = WordPieceTokenizer(korean_vocabulary, lowercase=True)
    assert tokenizer.keep_hangul
    eager = tokenizer.tokenize(korean_sample).to_list()
    in_graph = tf.function(tokenizer.tokenize)(tf.constant(korean_sample)).to_list()
    reference = [encoding.ids for encoding in _hugging_face(korean_vocabulary).encode_batch(korean_sample, add_special_tokens=False)]
    assert eager == in_graph == reference
    assert tokenizer.unk_id not in {piece for row in eager for piece in row}
    assert tokenizer.detokenize([eager[0]]).numpy()[0].decode() == " ".join(
        tokenizer.id_to_token(piece) for piece in eager[0]).replace(" ##", "")


def test_offsets_of_hangul_pieces_point_at_the_syllables(korean_vocabulary):
    tokenizer = WordPieceTokenizer(korean_vocabulary, lowercase=True)
    text = "대한민국은 민주공화국이다."
    ids, starts, ends = tokenizer.tokenize_with_offsets([text])
    raw = text.encode()
    pieces = [raw[s:e].decode() for s, e in zip(starts[0].numpy(), ends[0].numpy())]
    assert "".join(pieces) == text.replace(" ", "")
    assert pieces == [tokenizer.id_to_token(int(i)).removeprefix("##") for i in ids[0].numpy()]


def test_vocabulary_of_decomposed_hangul_keeps_hugging_face_behaviour(korean_vocabulary):
    import unicodedata

    decomposed = list(dict.fromkeys(unicodedata.normalize("NFD", token) for token in korean_vocabulary))
    tokenizer = WordPieceTokenizer(decomposed, lowercase=True)
    assert not tokenizer.keep_hangul
    text = ["대한민국은 민주공화국이다."]
    hugging_face = _hugging_face(decomposed)
    hugging_face.normalizer = __import__("tokenizers").normalizers.BertNormalizer(lowercase=True)
    assert tokenizer.tokenize(text).to_list() == [hugging_face.encode(text[0], add_special_tokens=False).ids]


def test_asking_to_strip_hangul_warns_with_the_fix_and_is_saved(korean_vocabulary, tmp_path):
    with pytest.warns(UserWarning, match="keep_hangul=True"):
        stripping = WordPieceTokenizer(korean_vocabulary, lowercase=True, keep_hangul=False)
    assert set(stripping.tokenize(["대한민국"]).flat_values.numpy()) == {stripping.unk_id}
    WordPieceTokenizer(korean_vocabulary, lowercase=True).save_assets(tmp_path)
    assert WordPieceTokenizer.from_directory(tmp_path).keep_hangul
