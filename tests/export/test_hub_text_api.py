"""The `--hub-pair` export of the real MiniLM checkpoint used exactly as the TF Hub BERT tutorials use
`bert_en_uncased_preprocess` / `bert_en_uncased_L-12_H-768_A-12`: with `tensorflow_hub` + `tf_keras`
(in a fresh process, TF_USE_LEGACY_KERAS=1) and with Keras 3 `TFSMLayer`; numbers equal the
SavedModels' serving signatures on the same text."""

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
BAD = [b"", b"\xff\xfe ok", b"a\x00b", "naïve café ".encode() * 100_000]
SEQUENCE_LENGTH = 24
SHORT_LENGTH = 8
TOLERANCE = 1e-5

pytest.importorskip("tensorflow_hub")
pytest.importorskip("tf_keras")


@pytest.fixture(scope="module")
def hub_pair(assets, tmp_path_factory):
    from tfbert.export import export_hub_pair

    minilm = Path(assets("minilm/config.json")).parent
    return export_hub_pair(minilm, "minilm", output_dir=tmp_path_factory.mktemp("hub"),
                           sequence_length=SEQUENCE_LENGTH, pair=True)


@pytest.fixture(scope="module")
def tutorial(hub_pair, tmp_path_factory):
    """The tutorial script's results, `{pattern: {output: array}}`."""
    folder = tmp_path_factory.mktemp("tutorial")
    texts = folder / "texts.json"
    texts.write_text(json.dumps({"first": FIRST, "second": SECOND, "seq_length": SEQUENCE_LENGTH,
                                 "short_length": SHORT_LENGTH, "bad": [text.hex() for text in BAD]}),
                     encoding="utf-8")
    results = folder / "results.npz"
    script = Path(__file__).with_name("hub_tutorial.py")
    completed = subprocess.run([sys.executable, str(script), *map(str, hub_pair), str(texts), str(results)],
                               capture_output=True, text=True, timeout=300,
                               env={**os.environ, "TF_USE_LEGACY_KERAS": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    grouped: dict[str, dict[str, np.ndarray]] = {}
    with np.load(results) as archive:
        for name in archive.files:
            pattern, output = name.split("/", 1)
            grouped.setdefault(pattern, {})[output] = archive[name]
    return grouped


@pytest.fixture(scope="module")
def signatures(hub_pair):
    preprocess, encoder = (tf.saved_model.load(str(path)) for path in hub_pair)
    pair = preprocess.signatures["preprocess"](text=tf.constant(FIRST), text_pair=tf.constant(SECOND))
    return {"pair": {name: value.numpy() for name, value in pair.items()}, "encoder": encoder}


def _encode(signatures, inputs):
    outputs = signatures["encoder"].signatures["encode"](**{name: tf.constant(value) for name, value in inputs.items()})
    return {name: value.numpy() for name, value in outputs.items()}


def test_hub_keras_layer_preprocess_equals_the_fine_tuning_preprocessor(tutorial, assets):
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.text import WordPieceTokenizer

    expected = Preprocessor(WordPieceTokenizer(assets("minilm/vocab.txt")), SEQUENCE_LENGTH).encode(FIRST)
    called = tutorial["call"]
    assert called["input_word_ids"].dtype == np.int32
    assert called["input_word_ids"].shape == (len(FIRST), SEQUENCE_LENGTH)
    np.testing.assert_array_equal(called["input_word_ids"], expected["token_ids"])
    np.testing.assert_array_equal(called["input_mask"], expected["padding_mask"])
    np.testing.assert_array_equal(called["input_type_ids"], expected["segment_ids"])


def test_hub_encoder_outputs_equal_the_encode_signature(tutorial, signatures):
    expected = _encode(signatures, tutorial["call"])
    encoded = tutorial["encoder"]
    np.testing.assert_allclose(encoded["pooled_output"], expected["pooled_output"], atol=TOLERANCE)
    np.testing.assert_allclose(encoded["sequence_output"], expected["sequence_output"], atol=TOLERANCE)
    np.testing.assert_array_equal(encoded["default_output"], encoded["pooled_output"])
    assert encoded["encoder_outputs"].shape[0] == 6
    np.testing.assert_allclose(encoded["encoder_outputs"][-1], expected["sequence_output"], atol=TOLERANCE)


def test_tokenize_then_bert_pack_inputs_equals_the_pair_signature(tutorial, signatures):
    assert int(tutorial["tokenize"]["rank"]) == 3  # [batch, words, pieces] for WordPiece
    for name, value in tutorial["pack"].items():
        np.testing.assert_array_equal(value, signatures["pair"][name])


def test_bert_pack_inputs_truncates_round_robin(tutorial):
    short = tutorial["short"]
    assert short["input_word_ids"].shape == (len(FIRST), SHORT_LENGTH)
    # row 0: both segments are longer than the 5 tokens left by [CLS] a [SEP] b [SEP]; round robin keeps 3 + 2
    np.testing.assert_array_equal(short["input_mask"][0], np.ones(SHORT_LENGTH))
    np.testing.assert_array_equal(short["input_type_ids"][0], [0] * (1 + 3 + 1) + [1] * (2 + 1))


def test_bad_input_through_hub_keras_layer_equals_the_signature(tutorial):
    for name, value in tutorial["bad_pair"].items():
        np.testing.assert_array_equal(value, tutorial["bad_signature"][name])
    mask = tutorial["bad"]["input_mask"]
    assert mask[0].sum() == 2, "an empty text is [CLS] [SEP]"
    assert mask[1].sum() > 2 and mask[2].sum() > 2, "invalid UTF-8 and NUL keep their readable text"
    assert mask[3].all(), "a 1 MB string is truncated to the sequence length"


def test_hub_keras_layer_encoder_fine_tunes(tutorial):
    finetune = tutorial["finetune"]
    assert int(finetune["num_trainable"]) > 0
    assert int(finetune["changed"]) == int(finetune["num_trainable"])


def test_keras3_tfsm_layer_runs_the_pair(hub_pair, signatures):
    import keras

    preprocess = keras.layers.TFSMLayer(str(hub_pair[0]), call_endpoint="__call__")
    encoder = keras.layers.TFSMLayer(str(hub_pair[1]), call_endpoint="__call__")
    packed = preprocess(tf.constant(FIRST))
    outputs = encoder(packed)
    expected = _encode(signatures, {name: value.numpy() for name, value in packed.items()})
    np.testing.assert_allclose(np.asarray(outputs["pooled_output"]), expected["pooled_output"], atol=TOLERANCE)


@pytest.fixture(scope="module")
def sentencepiece_hub_text(assets):
    """RoBERTa-style packing over a SentencePiece vocabulary (`<unk>` stands in for the pad token it lacks)."""
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.export.hub_text import HubText
    from tfbert.text import SentencePieceTokenizer

    tokenizer = SentencePieceTokenizer(assets("spm/botchan_en_unigram_1000.model"), special_tokens={"pad": "<unk>"})
    return HubText(Preprocessor(tokenizer, SEQUENCE_LENGTH, "roberta"))


def test_sentencepiece_tokenize_is_flat_and_packs_roberta_style(sentencepiece_hub_text):
    hub_text = sentencepiece_hub_text
    first, second = hub_text.tokenize(tf.constant(FIRST[:2])), hub_text.tokenize(tf.constant(SECOND[:2]))
    assert isinstance(first, tf.RaggedTensor) and first.shape.rank == 2
    packed = hub_text.bert_pack_inputs([first, second], seq_length=SEQUENCE_LENGTH)
    tokenizer = hub_text.preprocessor.tokenizer
    row_first, row_second = first[1].numpy().tolist(), second[1].numpy().tolist()
    expected = [tokenizer.cls_id, *row_first, tokenizer.sep_id, tokenizer.sep_id, *row_second, tokenizer.sep_id]
    np.testing.assert_array_equal(packed["input_word_ids"][1, :len(expected)], expected)
    assert int(tf.reduce_sum(packed["input_type_ids"])) == 0


def test_bert_pack_inputs_rejects_a_length_without_room_for_the_segments(hub_pair):
    preprocessor = tf.saved_model.load(str(hub_pair[0]))
    segments = [preprocessor.tokenize(tf.constant(FIRST))] * 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="no room for 2 segments"):
        preprocessor.bert_pack_inputs(segments, seq_length=4)


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
