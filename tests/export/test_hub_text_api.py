"""`--hub-pair` exports used exactly as the TF Hub BERT tutorials use `bert_en_uncased_preprocess` /
`bert_en_uncased_L-12_H-768_A-12`, for each tokenizer kind: WordPiece (the real MiniLM checkpoint),
SentencePiece (a tiny ALBERT) and byte-level BPE (a tiny RoBERTa on GPT-2's vocabulary). One fresh
process (`hub_tutorial.py`, `tensorflow_hub` + `tf_keras`) runs every pattern and the SavedModels'
serving signatures on the same text; Keras 3 `TFSMLayer` runs here. Numbers must be equal."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer ops)

FIRST = ["Ada Lovelace wrote the first program.", "unaffable naïve café", "", "hello"]
SECOND = ["Who wrote it?", "Zürich", "x", ""]
# empty, invalid UTF-8, NUL, a 1 MB string
BAD = [b"", b"\xff\xfe ok", b"a\x00b", "naïve café ".encode() * 80_000]
SEQUENCE_LENGTH = 16
SHORT_LENGTH = 8
TOLERANCE = 1e-5
KINDS = ["wordpiece", "sentencepiece", "byte_bpe"]
GPT2_SPECIALS = {"<|endoftext|>": 50256, "<s>": 50257, "</s>": 50258, "<pad>": 50259, "<mask>": 50260}

pytest.importorskip("tensorflow_hub")
pytest.importorskip("tf_keras")


def _tiny_encoder(config_name: str, vocabulary_size: int):
    import keras

    from tfbert.config import load_config
    from tfbert.models.encoder import Encoder

    keras.utils.set_random_seed(0)
    config = load_config(config_name).encoder
    return Encoder(config.replace(vocab_size=vocabulary_size, num_layers=1), name="encoder")


def _sources(assets):
    """`kind -> (source, tokenizer)`: MiniLM from its folder; ALBERT and RoBERTa tiny, random weights."""
    from tfbert.text import BytePairTokenizer, SentencePieceTokenizer

    sentencepiece = SentencePieceTokenizer(assets("spm/botchan_en_unigram_1000.model"), lowercase=True,
                                           special_tokens={"pad": "<unk>"})
    byte_bpe = BytePairTokenizer.from_tiktoken(assets("bpe/gpt2.tiktoken"), special_tokens=GPT2_SPECIALS)
    return {
        "wordpiece": (Path(assets("minilm/config.json")).parent, None),
        "sentencepiece": (_tiny_encoder("albert_tiny", sentencepiece.vocabulary_size()), sentencepiece),
        "byte_bpe": (_tiny_encoder("roberta_tiny", byte_bpe.vocabulary_size()), byte_bpe),
    }


@pytest.fixture(scope="module")
def hub_pairs(assets, tmp_path_factory):
    """`kind -> (preprocess_dir, encoder_dir)`, one export per tokenizer kind."""
    from tfbert.export import export_hub_pair

    root = tmp_path_factory.mktemp("hub")
    return {kind: export_hub_pair(source, kind, tokenizer=tokenizer, output_dir=root,
                                  sequence_length=SEQUENCE_LENGTH, pair=True)
            for kind, (source, tokenizer) in _sources(assets).items()}


@pytest.fixture(scope="module")
def tutorial(hub_pairs, tmp_path_factory):
    """The tutorial script's results, `{kind: {pattern: {output: array}}}`."""
    folder = tmp_path_factory.mktemp("tutorial")
    request = folder / "request.json"
    request.write_text(json.dumps({"pairs": {kind: list(map(str, pair)) for kind, pair in hub_pairs.items()},
                                   "first": FIRST, "second": SECOND, "bad": [text.hex() for text in BAD],
                                   "seq_length": SEQUENCE_LENGTH, "short_length": SHORT_LENGTH}), encoding="utf-8")
    results = folder / "results.npz"
    script = Path(__file__).with_name("hub_tutorial.py")
    completed = subprocess.run([sys.executable, str(script), str(request), str(results)], capture_output=True,
                               text=True, timeout=600, env={**os.environ, "TF_USE_LEGACY_KERAS": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    grouped: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    with np.load(results) as archive:
        for name in archive.files:
            pattern, output = name.split("/", 1)
            kind, pattern = pattern.split(".", 1)
            grouped.setdefault(kind, {}).setdefault(pattern, {})[output] = archive[name]
    return grouped


def _equal(actual: dict, expected: dict):
    assert actual.keys() == expected.keys()
    for name in actual:
        np.testing.assert_array_equal(actual[name], expected[name])


@pytest.mark.parametrize("kind", KINDS)
def test_hub_keras_layer_preprocess_equals_the_preprocess_signature(tutorial, kind):
    called = tutorial[kind]["call"]
    assert called["input_word_ids"].dtype == np.int32
    assert called["input_word_ids"].shape == (len(FIRST), SEQUENCE_LENGTH)
    _equal(called, tutorial[kind]["signature.call"])


def test_wordpiece_preprocess_equals_the_fine_tuning_preprocessor(tutorial, assets):
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.text import WordPieceTokenizer

    expected = Preprocessor(WordPieceTokenizer(assets("minilm/vocab.txt")), SEQUENCE_LENGTH).encode(FIRST)
    called = tutorial["wordpiece"]["call"]
    np.testing.assert_array_equal(called["input_word_ids"], expected["token_ids"])
    np.testing.assert_array_equal(called["input_mask"], expected["padding_mask"])
    np.testing.assert_array_equal(called["input_type_ids"], expected["segment_ids"])


@pytest.mark.parametrize("kind", KINDS)
def test_hub_encoder_outputs_equal_the_encode_signature(tutorial, kind):
    expected, encoded = tutorial[kind]["signature.encoder"], tutorial[kind]["encoder"]
    np.testing.assert_allclose(encoded["pooled_output"], expected["pooled_output"], atol=TOLERANCE)
    np.testing.assert_allclose(encoded["sequence_output"], expected["sequence_output"], atol=TOLERANCE)
    np.testing.assert_array_equal(encoded["default_output"], encoded["pooled_output"])
    assert encoded["encoder_outputs"].shape[0] == (6 if kind == "wordpiece" else 1)
    np.testing.assert_allclose(encoded["encoder_outputs"][-1], expected["sequence_output"], atol=TOLERANCE)


@pytest.mark.parametrize("kind", KINDS)
def test_tokenize_then_bert_pack_inputs_equals_the_pair_signature(tutorial, kind):
    # [batch, words, pieces] for WordPiece, [batch, pieces] for SentencePiece and byte-level BPE
    assert int(tutorial[kind]["tokenize"]["rank"]) == (3 if kind == "wordpiece" else 2)
    _equal(tutorial[kind]["pack"], tutorial[kind]["signature.pack"])


def test_roberta_style_pairs_have_type_ids_zero(tutorial):
    packed = tutorial["byte_bpe"]["pack"]
    assert not packed["input_type_ids"].any()
    assert (tutorial["wordpiece"]["pack"]["input_type_ids"][:2] == 1).any()


@pytest.mark.parametrize("kind", KINDS)
def test_bert_pack_inputs_truncates_round_robin(tutorial, kind):
    short = tutorial[kind]["short"]
    assert short["input_word_ids"].shape == (len(FIRST), SHORT_LENGTH)
    np.testing.assert_array_equal(short["input_mask"][0], np.ones(SHORT_LENGTH))
    if kind == "wordpiece":
        # row 0: both segments are longer than the 5 tokens left by [CLS] a [SEP] b [SEP]; round robin keeps 3 + 2
        np.testing.assert_array_equal(short["input_type_ids"][0], [0] * (1 + 3 + 1) + [1] * (2 + 1))


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_through_hub_equals_the_signature(tutorial, kind):
    bad = tutorial[kind]["bad"]
    _equal(bad, tutorial[kind]["signature.bad"])
    assert bad["input_mask"][0].sum() == 2, "an empty text is [CLS] [SEP] (<s> </s>)"
    assert bad["input_mask"][3].all(), "a 1 MB string is truncated to the sequence length"
    assert "no room for 2 segments" in str(tutorial[kind]["too_short"]["error"])


@pytest.mark.parametrize("kind", KINDS)
def test_hub_keras_layer_encoder_fine_tunes(tutorial, kind):
    finetune = tutorial[kind]["finetune"]
    assert int(finetune["num_trainable"]) > 0
    assert int(finetune["changed"]) > 0


@pytest.mark.parametrize("kind", KINDS)
def test_keras3_tfsm_layer_runs_the_pair(hub_pairs, tutorial, kind):
    import keras

    preprocess = keras.layers.TFSMLayer(str(hub_pairs[kind][0]), call_endpoint="__call__")
    encoder = keras.layers.TFSMLayer(str(hub_pairs[kind][1]), call_endpoint="__call__")
    packed = preprocess(tf.constant(FIRST))
    _equal({name: np.asarray(value) for name, value in packed.items()}, tutorial[kind]["signature.call"])
    outputs = encoder(packed)
    np.testing.assert_allclose(np.asarray(outputs["pooled_output"]), tutorial[kind]["signature.encoder"]["pooled_output"],
                               atol=TOLERANCE)


def test_wordpiece_tokenize_groups_pieces_into_words(assets):
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.export.hub_text import HubText
    from tfbert.text import WordPieceTokenizer

    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"))
    words = HubText(Preprocessor(tokenizer, SEQUENCE_LENGTH)).tokenize(tf.constant(FIRST))
    assert words.shape.rank == 3
    assert words.merge_dims(1, 2).to_list() == tokenizer.tokenize(tf.constant(FIRST)).to_list()
    for row in words.to_list():
        for word in row:
            pieces = [tokenizer.vocabulary()[piece] for piece in word]
            assert not pieces[0].startswith("##") and all(piece.startswith("##") for piece in pieces[1:])
