"""`--hub-pair` exports used exactly as the TF Hub BERT tutorials use `bert_en_uncased_preprocess` /
`bert_en_uncased_L-12_H-768_A-12`, for the three tokenizer kinds: WordPiece (the real MiniLM
checkpoint), SentencePiece (a tiny ALBERT) and byte-level BPE (a tiny RoBERTa on GPT-2's vocabulary).
With `tensorflow_hub` + `tf_keras` (`hub_tutorial.py`: one fresh process, TF_USE_LEGACY_KERAS=1, all
three pairs) and with Keras 3 `TFSMLayer`; numbers equal the SavedModels' serving signatures on the
same text."""

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
SEQUENCE_LENGTH = 16
SHORT_LENGTH = 8
TOLERANCE = 1e-5  # absolute and relative: the tutorial's numbers come from another process
KINDS = ["wordpiece", "sentencepiece", "byte_bpe"]
GPT2_SPECIALS = {"<|endoftext|>": 50256, "<s>": 50257, "</s>": 50258, "<pad>": 50259, "<mask>": 50260}

pytest.importorskip("tensorflow_hub")
pytest.importorskip("tf_keras")


def _source(kind: str, assets):
    """`(source, tokenizer)` of one kind: MiniLM's checkpoint folder, else a tiny encoder (random weights)."""
    import keras

    from tfbert.config import load_config
    from tfbert.models.encoder import Encoder
    from tfbert.text import BytePairTokenizer, SentencePieceTokenizer

    if kind == "wordpiece":
        return Path(assets("minilm/config.json")).parent, None
    if kind == "sentencepiece":
        config_name = "albert_tiny"
        tokenizer = SentencePieceTokenizer(assets("spm/botchan_en_unigram_1000.model"), lowercase=True,
                                           special_tokens={"pad": "<unk>"})
    else:
        config_name = "roberta_tiny"
        tokenizer = BytePairTokenizer.from_tiktoken(assets("bpe/gpt2.tiktoken"), special_tokens=GPT2_SPECIALS)
    keras.utils.set_random_seed(0)
    config = load_config(config_name).encoder
    return Encoder(config.replace(vocab_size=tokenizer.vocabulary_size(), num_layers=1), name="encoder"), tokenizer


@pytest.fixture(scope="module")
def hub_pairs(assets, tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """`{kind: (preprocess_dir, encoder_dir)}`: one pair export (`pair=True`) per tokenizer kind."""
    from tfbert.export import export_hub_pair

    root = tmp_path_factory.mktemp("hub")
    pairs = {}
    for kind in KINDS:
        source, tokenizer = _source(kind, assets)
        pairs[kind] = export_hub_pair(source, kind, tokenizer=tokenizer, output_dir=root,
                                      sequence_length=SEQUENCE_LENGTH, pair=True)
    return pairs


@pytest.fixture(scope="module")
def tutorial(hub_pairs, tmp_path_factory) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """The tutorial script's results, `{kind: {pattern: {output: array}}}`."""
    folder = tmp_path_factory.mktemp("tutorial")
    request, results = folder / "request.json", folder / "results.npz"
    request.write_text(json.dumps({"pairs": {kind: [str(path) for path in pair] for kind, pair in hub_pairs.items()},
                                   "first": FIRST, "second": SECOND, "seq_length": SEQUENCE_LENGTH,
                                   "short_length": SHORT_LENGTH, "bad": [text.hex() for text in BAD]}),
                       encoding="utf-8")
    script = Path(__file__).with_name("hub_tutorial.py")
    completed = subprocess.run([sys.executable, str(script), str(request), str(results)], capture_output=True,
                               text=True, timeout=420, env={**os.environ, "TF_USE_LEGACY_KERAS": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    grouped: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    with np.load(results) as archive:
        for name in archive.files:
            kind, pattern, output = name.split("/", 2)
            grouped.setdefault(kind, {}).setdefault(pattern, {})[output] = archive[name]
    return grouped


def _assert_close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=TOLERANCE, atol=TOLERANCE)


def _assert_equal(actual: dict, expected: dict):
    assert actual.keys() == expected.keys()
    for name in actual:
        np.testing.assert_array_equal(actual[name], expected[name], err_msg=name)


@pytest.mark.parametrize("kind", KINDS)
def test_hub_keras_layer_preprocess_packs_one_segment(tutorial, kind):
    called = tutorial[kind]["call"]
    assert called["input_word_ids"].dtype == np.int32
    assert called["input_word_ids"].shape == (len(FIRST), SEQUENCE_LENGTH)
    _assert_equal(called, tutorial[kind]["one_segment"])


def test_hub_keras_layer_preprocess_equals_the_fine_tuning_preprocessor(tutorial, assets):
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.text import WordPieceTokenizer

    expected = Preprocessor(WordPieceTokenizer(assets("minilm/vocab.txt")), SEQUENCE_LENGTH).encode(FIRST)
    called = tutorial["wordpiece"]["call"]
    np.testing.assert_array_equal(called["input_word_ids"], expected["token_ids"])
    np.testing.assert_array_equal(called["input_mask"], expected["padding_mask"])
    np.testing.assert_array_equal(called["input_type_ids"], expected["segment_ids"])


@pytest.mark.parametrize("kind", KINDS)
def test_hub_encoder_outputs_equal_the_encode_signature(tutorial, kind):
    expected, encoded = tutorial[kind]["signature_encode"], tutorial[kind]["encoder"]
    _assert_close(encoded["pooled_output"], expected["pooled_output"])
    _assert_close(encoded["sequence_output"], expected["sequence_output"])
    np.testing.assert_array_equal(encoded["default_output"], encoded["pooled_output"])
    assert encoded["encoder_outputs"].shape[0] == (6 if kind == "wordpiece" else 1)
    _assert_close(encoded["encoder_outputs"][-1], expected["sequence_output"])


@pytest.mark.parametrize("kind", KINDS)
def test_tokenize_then_bert_pack_inputs_equals_the_pair_signature(tutorial, kind):
    # [batch, words, pieces] for WordPiece as TF Hub's BERT preprocessors; [batch, pieces] otherwise
    assert int(tutorial[kind]["tokenize"]["rank"]) == (3 if kind == "wordpiece" else 2)
    packed = tutorial[kind]["pack"]
    _assert_equal(packed, tutorial[kind]["signature_pair"])
    if kind == "byte_bpe":
        assert not packed["input_type_ids"].any(), "RoBERTa packs pairs with type ids 0"
    else:
        assert packed["input_type_ids"][0].any()


def test_bert_pack_inputs_truncates_round_robin(tutorial):
    short = tutorial["wordpiece"]["short"]
    assert short["input_word_ids"].shape == (len(FIRST), SHORT_LENGTH)
    # row 0: both segments are longer than the 5 tokens left by [CLS] a [SEP] b [SEP]; round robin keeps 3 + 2
    np.testing.assert_array_equal(short["input_mask"][0], np.ones(SHORT_LENGTH))
    np.testing.assert_array_equal(short["input_type_ids"][0], [0] * (1 + 3 + 1) + [1] * (2 + 1))


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_through_hub_keras_layer_equals_the_signature(tutorial, kind):
    _assert_equal(tutorial[kind]["bad_pair"], tutorial[kind]["signature_bad_pair"])
    mask = tutorial[kind]["bad"]["input_mask"]
    assert mask[0].sum() == 2, "an empty text is [CLS] [SEP] (<s> </s>)"
    assert mask[1].sum() > 2 and mask[2].sum() > 2, "invalid UTF-8 and NUL keep their readable text"
    assert mask[3].all(), "a 1 MB string is truncated to the sequence length"


@pytest.mark.parametrize("kind", KINDS)
def test_bert_pack_inputs_rejects_segments_that_do_not_fit(tutorial, kind):
    errors = tutorial[kind]["errors"]
    assert str(errors["no_room"]).startswith("InvalidArgumentError")
    assert "sequence_length leaves no room for 2 segments" in str(errors["no_room"])
    # 4 segments: 1 to 3 are traced, so TensorFlow refuses the call before anything runs, listing them
    too_many = str(errors["too_many_segments"])
    assert too_many.startswith("ValueError") and "Could not find matching concrete function" in too_many
    assert int(errors["then_packs"]) == SEQUENCE_LENGTH, "the layer still packs after the errors"


@pytest.mark.parametrize("kind", KINDS)
def test_hub_keras_layer_encoder_fine_tunes(tutorial, kind):
    finetune = tutorial[kind]["finetune"]
    assert int(finetune["num_trainable"]) > 0
    assert int(finetune["changed"]) == int(finetune["num_trainable"])


@pytest.mark.parametrize("kind", KINDS)
def test_keras3_tfsm_layers_equal_the_hub_keras_layers(hub_pairs, tutorial, kind):
    import keras

    preprocess_dir, encoder_dir = hub_pairs[kind]
    preprocess = keras.layers.TFSMLayer(str(preprocess_dir), call_endpoint="__call__")
    encoder = keras.layers.TFSMLayer(str(encoder_dir), call_endpoint="__call__")
    packed = preprocess(tf.constant(FIRST))
    _assert_equal({name: np.asarray(value) for name, value in packed.items()}, tutorial[kind]["call"])
    outputs = encoder(packed)
    expected = tutorial[kind]["signature_encode"]
    for name in ("pooled_output", "sequence_output"):
        _assert_close(outputs[name], expected[name])
    assert len(outputs["encoder_outputs"]) == tutorial[kind]["encoder"]["encoder_outputs"].shape[0]


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
    packed = hub_text.bert_pack_inputs([first, second], seq_length=32)  # room for both rows whole
    tokenizer = hub_text.preprocessor.tokenizer
    row_first, row_second = first[1].numpy().tolist(), second[1].numpy().tolist()
    expected = [tokenizer.cls_id, *row_first, tokenizer.sep_id, tokenizer.sep_id, *row_second, tokenizer.sep_id]
    np.testing.assert_array_equal(packed["input_word_ids"][1, :len(expected)], expected)
    assert int(tf.reduce_sum(packed["input_type_ids"])) == 0


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
