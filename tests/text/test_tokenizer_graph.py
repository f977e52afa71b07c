"""Every tokenizer inside graphs: SavedModel round trip, tf.data map, tf.function, a Keras model."""

import pytest
import tensorflow as tf

from tfbert.text import BytePairTokenizer, SentencePieceTokenizer, WordPieceTokenizer

TEXTS = ["Hello, world! Straße 中文 😀", "", "  spaces  ", "a\x00b", "it's 3.14 — ok?"]


@pytest.fixture(scope="module", params=["wordpiece", "sentencepiece", "byte_pair"])
def tokenizer(request, assets, wordpiece, gpt2_bpe):
    if request.param == "wordpiece":
        return wordpiece
    if request.param == "sentencepiece":
        return SentencePieceTokenizer(assets("spm/botchan_en_unigram_1000.model"))
    return gpt2_bpe


class Serving(tf.Module):
    def __init__(self, tokenizer):
        super().__init__()
        self.tokenizer = tokenizer

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def tokenize(self, strings):
        return self.tokenizer.tokenize(strings)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def padded_ids(self, strings):
        return self.tokenizer.tokenize(strings).to_tensor(-1)

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.int32)])
    def detokenize(self, ids):
        return self.tokenizer.detokenize(ids)


def test_saved_model_round_trip(tokenizer, tmp_path):
    expected = tokenizer.tokenize(tf.constant(TEXTS))
    module = Serving(tokenizer)
    tf.saved_model.save(module, str(tmp_path / "saved"), signatures={"serving_default": module.padded_ids})
    restored = tf.saved_model.load(str(tmp_path / "saved"))
    assert restored.tokenize(tf.constant(TEXTS)).to_list() == expected.to_list()
    assert restored.detokenize(expected).numpy().tolist() == tokenizer.detokenize(expected).numpy().tolist()
    served = restored.signatures["serving_default"](strings=tf.constant(TEXTS))
    assert served["output_0"].numpy().tolist() == expected.to_tensor(-1).numpy().tolist()


def test_dataset_map(tokenizer):
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS * 4).batch(3).map(tokenizer.tokenize, num_parallel_calls=2)
    got = [row for batch in dataset for row in batch.to_list()]
    assert got == tokenizer.tokenize(tf.constant(TEXTS * 4)).to_list()
    per_string = tf.data.Dataset.from_tensor_slices(TEXTS).map(tokenizer.tokenize)
    assert [ids.numpy().tolist() for ids in per_string] == tokenizer.tokenize(tf.constant(TEXTS)).to_list()


def test_tf_function_with_offsets(tokenizer):
    compiled = tf.function(tokenizer.tokenize_with_offsets, jit_compile=False)
    ids, starts, ends = compiled(tf.constant(TEXTS))
    eager_ids, eager_starts, eager_ends = tokenizer.tokenize_with_offsets(tf.constant(TEXTS))
    assert ids.to_list() == eager_ids.to_list()
    assert starts.to_list() == eager_starts.to_list() and ends.to_list() == eager_ends.to_list()
    assert starts.dtype == ends.dtype == tf.int64


def test_assets_directory_round_trip(tokenizer, tmp_path):
    tokenizer.save_assets(tmp_path)
    loaded = type(tokenizer).from_directory(tmp_path)
    assert loaded.vocabulary() == tokenizer.vocabulary()
    assert loaded.special_token_ids() == tokenizer.special_token_ids()
    assert loaded.tokenize(tf.constant(TEXTS)).to_list() == tokenizer.tokenize(tf.constant(TEXTS)).to_list()


def test_load_tokenizer_picks_the_class(tokenizer, tmp_path):
    from tfbert.text import load_tokenizer

    tokenizer.save_assets(tmp_path)
    assert isinstance(load_tokenizer(tmp_path), type(tokenizer))


def test_classes_are_modules():
    for cls in (WordPieceTokenizer, SentencePieceTokenizer, BytePairTokenizer):
        assert issubclass(cls, tf.Module)


def test_sentencepiece_survives_reseeding(assets):
    """`tf.random.set_seed` clears TF's kernel cache, which deleted TF-Text's unnamed SentencePiece resource."""
    import keras

    from tfbert.text import SentencePieceTokenizer

    tokenizer = SentencePieceTokenizer(assets("spm/botchan_en_unigram_1000.model"))
    expected = tokenizer.tokenize(["hello world"]).to_list()
    keras.utils.set_random_seed(0)
    dataset = tf.data.Dataset.from_tensor_slices(["hello world"]).map(tokenizer.tokenize)
    assert [next(iter(dataset)).numpy().tolist()] == expected


def test_inside_a_keras_model_and_its_export(wordpiece, tmp_path):
    import keras

    class Tokenize(keras.layers.Layer):
        def __init__(self, tokenizer, length, **kwargs):
            super().__init__(**kwargs)
            self.tokenizer = tokenizer
            self.length = length

        def call(self, strings):
            return self.tokenizer.tokenize(strings).to_tensor(shape=[None, self.length])

    strings = keras.Input(shape=(), dtype="string")
    model = keras.Model(strings, Tokenize(wordpiece, 8)(strings))
    expected = [[7592, 2088, 0, 0, 0, 0, 0, 0], [2358, 27807, 0, 0, 0, 0, 0, 0]]
    assert model.predict(tf.constant(["hello world", "Straße"]), verbose=0).tolist() == expected
    model.export(str(tmp_path / "export"), format="tf_saved_model", verbose=False)
    served = tf.saved_model.load(str(tmp_path / "export")).serve(tf.constant(["hello world", "Straße"]))
    assert served.numpy().tolist() == expected
