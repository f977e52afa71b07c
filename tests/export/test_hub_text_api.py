"""`--hub-pair` exports used exactly as the TF Hub BERT tutorials use `bert_en_uncased_preprocess` /
`bert_en_uncased_L-12_H-768_A-12`, for the three tokenizer kinds: WordPiece (the real MiniLM
checkpoint), SentencePiece (a tiny ALBERT) and byte-level BPE (a tiny RoBERTa on GPT-2's vocabulary).
With `tensorflow_hub` + `tf_keras` (`hub_tutorial.py`: one fresh process, TF_USE_LEGACY_KERAS=1, all
three pairs, plus the `encoder.mlm` of a tiny BERT pretraining model's pair) and with Keras 3
`TFSMLayer`; numbers equal the SavedModels' serving signatures on the same text, and the tutorials'
saved-and-reloaded models equal the models in memory."""

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
MASKED = ["paris is the [MASK] of france.", "the [MASK] sat on the [MASK].", "no mask here", "[MASK]"]
MASKED_POSITIONS = [[4, 0], [2, 6], [1, 2], [1, 1]]
MASKED_IDS = [[3007, 0], [4937, 2723], [2053, 7308], [1996, 1996]]
KINDS = ["wordpiece", "sentencepiece", "byte_bpe"]
GPT2_SPECIALS = {"<|endoftext|>": 50256, "<s>": 50257, "</s>": 50258, "<pad>": 50259, "<mask>": 50260}

pytest.importorskip("tensorflow_hub")
pytest.importorskip("tf_keras")
# The tutorial fixture's process (up to 1,200 s on a loaded machine) counts toward its first test's time: over
# the suite's 600 s, pytest-timeout would end the whole worker, not the test.
pytestmark = [pytest.mark.timeout(1500), pytest.mark.end_to_end]


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
def mlm_pair(assets, tmp_path_factory) -> tuple[Path, Path]:
    """The pair of a tiny BERT pretraining model (random weights, dropout 0.1) on MiniLM's vocabulary: its
    encoder has the `mlm` sub-object."""
    import keras

    from tfbert.config import load_config
    from tfbert.export import export_hub_pair
    from tfbert.models.pretraining import PretrainingModel
    from tfbert.text import WordPieceTokenizer

    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"))
    config = load_config("bert_tiny")
    config = config.replace(encoder=config.encoder.replace(vocab_size=tokenizer.vocabulary_size(), num_layers=1,
                                                           max_positions=64))
    keras.utils.set_random_seed(0)
    return export_hub_pair(PretrainingModel(config), "mlm", tokenizer=tokenizer,
                           output_dir=tmp_path_factory.mktemp("hub_mlm"), sequence_length=SEQUENCE_LENGTH)


@pytest.fixture(scope="module")
def tutorial(hub_pairs, mlm_pair, tmp_path_factory) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """The tutorial script's results, `{kind: {pattern: {output: array}}}` (kind `mlm_pair` for `encoder.mlm`)."""
    folder = tmp_path_factory.mktemp("tutorial")
    request, results = folder / "request.json", folder / "results.npz"
    request.write_text(json.dumps({"pairs": {kind: [str(path) for path in pair] for kind, pair in hub_pairs.items()},
                                   "mlm_pair": [str(path) for path in mlm_pair], "folder": str(folder / "saved"),
                                   "first": FIRST, "second": SECOND, "seq_length": SEQUENCE_LENGTH,
                                   "short_length": SHORT_LENGTH, "bad": [text.hex() for text in BAD],
                                   "masked": MASKED, "positions": MASKED_POSITIONS, "masked_ids": MASKED_IDS}),
                       encoding="utf-8")
    script = Path(__file__).with_name("hub_tutorial.py")
    completed = subprocess.run([sys.executable, str(script), str(request), str(results)], capture_output=True,
                               text=True, timeout=1200, env={**os.environ, "TF_USE_LEGACY_KERAS": "1"})
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
    _assert_every_weight_changed(tutorial[kind]["finetune"])


def _assert_every_weight_changed(finetune: dict) -> None:
    assert int(finetune["num_trainable"]) > 0
    assert int(finetune["changed"]) == int(finetune["num_trainable"]), finetune.get("unchanged")


@pytest.mark.parametrize("kind", KINDS)
def test_hub_keras_layer_preprocess_takes_a_python_list(tutorial, kind):
    _assert_equal(tutorial[kind]["call_list"], tutorial[kind]["call"])


@pytest.mark.parametrize("kind", KINDS)
def test_encoder_has_dropout_only_with_training_true(tutorial, kind):
    dropout = tutorial[kind]["dropout"]
    np.testing.assert_array_equal(dropout["inference"][0], dropout["inference"][1])
    _assert_close(dropout["inference"][0], tutorial[kind]["signature_encode"]["pooled_output"])
    # MiniLM has dropout 0.1; the tiny ALBERT and RoBERTa configs have none
    assert (not np.allclose(*dropout["training"])) == (kind == "wordpiece")


@pytest.mark.parametrize("kind", KINDS)
def test_classify_text_saved_and_reloaded_equals_the_classifier(tutorial, kind):
    reloaded = tutorial[kind]["reloaded"]
    assert reloaded["expected"].shape == (len(FIRST), 1)
    _assert_close(reloaded["call"], reloaded["expected"])
    _assert_close(reloaded["serving"], reloaded["expected"])


@pytest.mark.parametrize("kind", KINDS)
def test_glue_preprocess_model_equals_the_pair_signature(tutorial, kind):
    _assert_equal(tutorial[kind]["glue_preprocess"], tutorial[kind]["signature_pair"])


@pytest.mark.parametrize("kind", KINDS)
def test_glue_classifier_fine_tunes_under_a_strategy_on_the_tf_data_map(tutorial, kind):
    _assert_every_weight_changed(tutorial[kind]["glue_finetune"])


@pytest.mark.parametrize("kind", KINDS)
def test_glue_export_reloaded_equals_the_model_in_memory(tutorial, kind):
    exported = tutorial[kind]["glue_export"]
    assert exported["expected"].shape == (len(FIRST), 2)
    # a batch, one example at a time (`prepare`), and serving_default on one example's strings
    # (`prepare_serving`: scalars, each read as a batch of one) or on the batch
    for name in ("batch", "rows", "serving_rows", "serving_batch"):
        np.testing.assert_allclose(exported[name], exported["expected"], rtol=TOLERANCE, atol=TOLERANCE,
                                   err_msg=name)


def test_glue_export_refuses_a_matrix_of_strings_naming_the_shape(tutorial):
    error = str(tutorial["wordpiece"]["errors"]["serving_matrix"])
    assert error.startswith("InvalidArgumentError")
    assert "text must be [batch] strings or one string; got shape" in error and "[2 2]" in error


def test_encoder_mlm_returns_tf_hubs_outputs(tutorial):
    mlm, encoder = tutorial["mlm_pair"]["mlm"], tutorial["mlm_pair"]["encoder"]
    assert mlm["keys"].tolist() == ["encoder_outputs", "mlm_logits", "pooled_output", "sequence_output"]
    assert int(mlm["encoder_outputs"]) == 1
    assert mlm["mlm_logits"].shape[:2] == np.shape(MASKED_POSITIONS)
    _assert_close(mlm["sequence_output"], encoder["sequence_output"])
    _assert_close(mlm["pooled_output"], encoder["pooled_output"])
    training = tutorial["mlm_pair"]["training"]["mlm_logits"]
    assert not np.allclose(training[0], training[1]), "training=True applies the encoder's dropout"


def test_hub_keras_layer_of_encoder_mlm_fine_tunes_the_encoder_and_head(tutorial):
    finetune = tutorial["mlm_pair"]["finetune"]
    names = finetune["names"].tolist()
    assert any(name.startswith("mlm_head/") for name in names) and any(name.startswith("layer0_") for name in names)
    # every variable the masked-LM loss reaches changes; the pooler is not on its path
    assert sorted(finetune["unchanged"].tolist()) == ["pooler/bias:0", "pooler/kernel:0"]


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
    return HubText(Preprocessor(tokenizer, SEQUENCE_LENGTH, packing_style="roberta"))


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
