"""TF Hub's text API on `--hub-pair` exports of the other tokenizer kinds: SentencePiece (a tiny ALBERT)
and byte-level BPE (a tiny RoBERTa on GPT-2's vocabulary), in this process with Keras 3 `TFSMLayer`
and the loaded SavedModels (`test_hub_text_api.py` runs the `tensorflow_hub` + `tf_keras` tutorial on
the WordPiece export). Numbers must equal the SavedModels' serving signatures on the same text."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer ops)

FIRST = ["Ada Lovelace wrote the first program.", "unaffable naïve café", "", "hello"]
SECOND = ["Who wrote it?", "Zürich", "x", ""]
# empty, invalid UTF-8, NUL, a 1 MB string
BAD = [b"", b"\xff\xfe ok", b"a\x00b", "naïve café ".encode() * 100_000]
SEQUENCE_LENGTH = 16
TOLERANCE = 1e-5
KINDS = ["sentencepiece", "byte_bpe"]
GPT2_SPECIALS = {"<|endoftext|>": 50256, "<s>": 50257, "</s>": 50258, "<pad>": 50259, "<mask>": 50260}


def _source(kind: str, assets):
    """`(tiny encoder with random weights, tokenizer)` of one kind."""
    import keras

    from tfbert.config import load_config
    from tfbert.models.encoder import Encoder
    from tfbert.text import BytePairTokenizer, SentencePieceTokenizer

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


@pytest.fixture(scope="module", params=KINDS)
def hub_pair(request, assets, tmp_path_factory):
    """`(kind, preprocess_dir, encoder_dir)`: one pair export (`pair=True`) per tokenizer kind."""
    from tfbert.export import export_hub_pair

    encoder, tokenizer = _source(request.param, assets)
    directories = export_hub_pair(encoder, request.param, tokenizer=tokenizer,
                                  output_dir=tmp_path_factory.mktemp("hub"), sequence_length=SEQUENCE_LENGTH,
                                  pair=True)
    return (request.param, *directories)


@pytest.fixture(scope="module")
def loaded(hub_pair):
    return tuple(tf.saved_model.load(str(directory)) for directory in hub_pair[1:])


def _numpy(outputs) -> dict[str, np.ndarray]:
    return {name: np.asarray(value) for name, value in outputs.items()}


def _assert_equal(actual: dict, expected: dict):
    assert actual.keys() == expected.keys()
    for name in actual:
        np.testing.assert_array_equal(actual[name], expected[name], err_msg=name)


def _tokenize_and_pack(preprocessor, first, second, **arguments):
    return _numpy(preprocessor.bert_pack_inputs([preprocessor.tokenize(first), preprocessor.tokenize(second)],
                                                **arguments))


def test_tokenize_then_bert_pack_inputs_equals_the_pair_signature(hub_pair, loaded):
    kind, preprocessor = hub_pair[0], loaded[0]
    first, second = tf.constant(FIRST), tf.constant(SECOND)
    assert preprocessor.tokenize(first).shape.rank == 2, "[batch, pieces] for SentencePiece and byte-level BPE"
    packed = _tokenize_and_pack(preprocessor, first, second)
    _assert_equal(packed, _numpy(preprocessor.signatures["preprocess"](text=first, text_pair=second)))
    assert packed["input_word_ids"].shape == (len(FIRST), SEQUENCE_LENGTH)
    if kind == "byte_bpe":
        assert not packed["input_type_ids"].any(), "RoBERTa packs pairs with type ids 0"
    else:
        assert packed["input_type_ids"][0].any()


def test_bad_input_packs_as_the_signature_does(hub_pair, loaded):
    preprocessor = loaded[0]
    bad = tf.constant(BAD)
    _assert_equal(_tokenize_and_pack(preprocessor, bad, bad[::-1]),
                  _numpy(preprocessor.signatures["preprocess"](text=bad, text_pair=bad[::-1])))
    mask = _numpy(preprocessor(bad))["input_mask"]
    assert mask[0].sum() == 2, "an empty text is [CLS] [SEP] (<s> </s>)"
    assert mask[1].sum() > 2 and mask[2].sum() > 2, "invalid UTF-8 and NUL keep their readable text"
    assert mask[3].all(), "a 1 MB string is truncated to the sequence length"
    segments = [preprocessor.tokenize(tf.constant(FIRST))] * 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="no room for 2 segments"):
        preprocessor.bert_pack_inputs(segments, seq_length=4)
    with pytest.raises((TypeError, ValueError)):  # 1 to 3 segments are traced
        preprocessor.bert_pack_inputs(segments * 2)


def test_keras3_tfsm_layers_equal_the_encode_signature(hub_pair, loaded):
    import keras

    preprocess = keras.layers.TFSMLayer(str(hub_pair[1]), call_endpoint="__call__")
    encoder = keras.layers.TFSMLayer(str(hub_pair[2]), call_endpoint="__call__")
    packed = preprocess(tf.constant(FIRST))
    one_segment = loaded[0].bert_pack_inputs([loaded[0].tokenize(tf.constant(FIRST))])
    _assert_equal(_numpy(packed), _numpy(one_segment))
    outputs = encoder(packed)
    expected = loaded[1].signatures["encode"](**packed)
    for name in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(np.asarray(outputs[name]), expected[name].numpy(), atol=TOLERANCE)
    np.testing.assert_array_equal(np.asarray(outputs["default_output"]), np.asarray(outputs["pooled_output"]))
    assert len(outputs["encoder_outputs"]) == 1
    np.testing.assert_allclose(np.asarray(outputs["encoder_outputs"][-1]), expected["sequence_output"].numpy(),
                               atol=TOLERANCE)


def test_encoder_trainable_variables_fine_tune(hub_pair, loaded):
    """What `hub.KerasLayer(encoder, trainable=True)` does under `fit`: call with `training=True` and
    step the encoder's `trainable_variables` along their gradients (on a copy of its own)."""
    packed = loaded[0](tf.constant(FIRST))
    encoder = tf.saved_model.load(str(hub_pair[2]))
    variables = list(encoder.trainable_variables)
    before = [variable.numpy() for variable in variables]
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(encoder(packed, training=True)["pooled_output"]))
    for variable, gradient in zip(variables, tape.gradient(loss, variables)):
        if gradient is not None:
            variable.assign_sub(1e-2 * tf.convert_to_tensor(gradient))
    changed = sum(not np.array_equal(old, variable.numpy()) for old, variable in zip(before, variables))
    assert variables and changed > len(variables) // 2
