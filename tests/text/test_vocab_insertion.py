"""`insert_words` on each tokenizer kind: old ids unchanged, each added word one piece, and the
tokenizer in the graph agreeing with the eager reference library on real English and Korean text."""

import warnings

import pytest
import sentencepiece
import tensorflow as tf

from tfbert.text import load_tokenizer, train_sentencepiece
from tfbert.text.vocab_insertion import insert_words, read_words

ENGLISH_WORDS = ["madonna", "shikoku", "the", "botchanesque"]


@pytest.fixture(scope="module")
def korean_sentencepiece(korean_lines, tmp_path_factory):
    """A 1,000-piece unigram model trained on the Korean assets, as a Korean user's would be."""
    return train_sentencepiece(tf.data.Dataset.from_tensor_slices(korean_lines), 1000, tmp_path_factory.mktemp("ko_spm"))


@pytest.fixture(scope="module")
def korean_domain_words(korean_sentencepiece, korean_lines):
    """Frequent words of the Korean text that the model splits into three or more pieces."""
    import collections

    counts = collections.Counter(word for line in korean_lines[:3000] for word in line.split() if word.isalpha())
    frequent = [word for word, _ in counts.most_common(400)]
    lengths = korean_sentencepiece.tokenize([" " + word for word in frequent]).row_lengths().numpy()
    return [word for word, length in zip(frequent, lengths) if length >= 3][:20]


def _eager_sentencepiece(tokenizer):
    processor = sentencepiece.SentencePieceProcessor()
    processor.LoadFromSerializedProto(tokenizer.model_proto())
    return processor


def _assert_insertion(insertion, before, words):
    after = insertion.tokenizer
    assert after.vocabulary()[: before.vocabulary_size()] == before.vocabulary()
    assert after.vocabulary_size() == before.vocabulary_size() + len(insertion.added)
    assert insertion.split == []
    assert all(len(after.tokenize(" " + word).numpy()) == 1 for word in words)


def test_sentencepiece_words_become_single_user_defined_pieces_on_korean_text(
        korean_sentencepiece, korean_domain_words, korean_lines, tmp_path):
    assert len(korean_domain_words) >= 10
    insertion = insert_words(korean_sentencepiece, korean_domain_words + [korean_domain_words[0]])
    _assert_insertion(insertion, korean_sentencepiece, korean_domain_words)
    words_added = insertion.added[-len(korean_domain_words):]
    assert words_added == ["\u2581" + word for word in korean_domain_words] and insertion.existing == []
    assert all(len(piece) == 1 for piece in insertion.added[: -len(korean_domain_words)])
    insertion.tokenizer.save_assets(tmp_path)
    reloaded = load_tokenizer(tmp_path)
    text = korean_lines[:300]
    eager = _eager_sentencepiece(reloaded)
    assert tf.function(reloaded.tokenize)(tf.constant(text)).to_list() == eager.EncodeAsIds(text)
    first_word_id = reloaded.token_to_id(words_added[0])
    assert sum(row.count(first_word_id) for row in eager.EncodeAsIds(text)) > 0
    again = insert_words(reloaded, korean_domain_words[:3])
    assert again.added == [] and again.existing == korean_domain_words[:3]


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_sentencepiece_insertion_for_both_model_kinds_matches_sentencepiece(assets, kind, botchan_lines):
    from tfbert.text import SentencePieceTokenizer

    before = SentencePieceTokenizer(assets(f"spm/botchan_en_{kind}_1000.model"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the exact unigram path stays available
        insertion = insert_words(before, ENGLISH_WORDS + ["대한민국"])
    _assert_insertion(insertion, before, ENGLISH_WORDS + ["대한민국"])
    assert insertion.existing == ["the"] and insertion.added[:4] == ["대", "한", "민", "국"]
    text = botchan_lines[:200] + ["Madonna and the madonna went to shikoku, botchanesque.", "대한민국 국민, 한국"]
    assert insertion.tokenizer.tokenize(text).to_list() == _eager_sentencepiece(insertion.tokenizer).EncodeAsIds(text)


def test_wordpiece_insertion_matches_hugging_face(wordpiece, hf_minilm, botchan_lines):
    from tokenizers import Tokenizer, models

    insertion = insert_words(wordpiece, ["Botchanesque", "hello", "대한민국", "covid-19"])
    assert insertion.existing == ["hello"] and insertion.split == ["covid-19"]
    assert insertion.added[0] == "botchanesque"
    reference = Tokenizer(models.WordPiece({t: i for i, t in enumerate(insertion.tokenizer.vocabulary())}, unk_token="[UNK]"))
    reference.normalizer, reference.pre_tokenizer = hf_minilm.normalizer, hf_minilm.pre_tokenizer
    text = botchan_lines[:200] + ["The botchanesque hero of 대한민국 had covid-19."]
    in_graph = tf.function(insertion.tokenizer.tokenize)(tf.constant(text)).to_list()
    assert in_graph == [encoding.ids for encoding in reference.encode_batch(text, add_special_tokens=False)]
    assert insertion.tokenizer.token_to_id("botchanesque") in in_graph[-1]


def test_byte_bpe_insertion_adds_merges_after_the_old_ones(gpt2_bpe, botchan_lines):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    insertion = insert_words(gpt2_bpe, ["Botchanesque", "world", "대한민국", "covid19"])
    assert insertion.existing == ["world"] and insertion.split == ["covid19"]
    assert "ĠBotchanesque" in insertion.added
    after = insertion.tokenizer
    assert after.merges()[: len(gpt2_bpe.merges())] == gpt2_bpe.merges()
    vocabulary = {token: index for index, token in enumerate(after.vocabulary())}
    merges = [tuple(line.split(" ")) for line in after.merges()]
    reference = Tokenizer(models.BPE(vocabulary, merges))
    reference.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    reference.decoder = decoders.ByteLevel()
    text = botchan_lines[:100] + ["The Botchanesque hero of 대한민국 had covid19."]
    in_graph = tf.function(after.tokenize)(tf.constant(text)).to_list()
    assert in_graph == [encoding.ids for encoding in reference.encode_batch(text, add_special_tokens=False)]
    assert vocabulary["ĠBotchanesque"] in in_graph[-1]


def test_tokens_file_with_a_space_inside_a_line_is_refused():
    assert read_words(["a", "", "b", "a"], "words.txt") == ["a", "b"]
    with pytest.raises(ValueError, match="line 2 'two words' holds a space"):
        read_words(["one", "two words"], "words.txt")
