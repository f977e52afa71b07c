"""`tfbert convert keras-hub`: presets written by keras-hub's `save_to_preset`, against the keras-hub backbones.

Tiny backbones with random weights (presets cannot be downloaded here) and their tokenizers are
saved with `save_to_preset`; the converted encoder must give the backbone's outputs on a padded
batch, and the tokenizer written beside it keras-hub's ids.
"""

import io
import json

import keras
import keras_hub
import numpy as np
import pytest
import sentencepiece

from tfbert.cli import main
from tfbert.finetuning.pretrained import load_pretrained_tokenizer

from tf1_releases import TOLERANCE, close_on_real_tokens, padded_batch

TEXT = "the quick brown fox jumps over the lazy dog."
SIZES = dict(num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=24, max_sequence_length=32)


def _wordpiece_vocabulary():
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *letters, *(f"##{c}" for c in letters),
            "the", "quick", "brown", "fox", ".", "over"]


def _sentencepiece_proto() -> bytes:
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter([TEXT, "the dog sleeps.", "a fox runs over the hill."] * 10), model_writer=model,
        vocab_size=30, hard_vocab_limit=False, minloglevel=2, model_type="WORD", pad_id=0, unk_id=1, bos_id=2, eos_id=3, pad_piece="<pad>",
        unk_piece="<unk>", bos_piece="[CLS]", eos_piece="[SEP]", user_defined_symbols="[MASK]")
    return model.getvalue()


def _byte_level_files():
    byte_chars = [chr(c) for c in range(ord("!"), ord("~") + 1)] + [chr(c) for c in range(ord("¡"), ord("¬") + 1)] \
        + [chr(c) for c in range(ord("®"), ord("ÿ") + 1)]
    byte_chars += [chr(256 + n) for n in range(256 - len(byte_chars))]
    tokens = ["<s>", "<pad>", "</s>", "<unk>", "<mask>", *byte_chars, "th", "the", "Ġthe", "Ġf", "Ġfox"]
    merges = ["t h", "th e", "Ġ the", "Ġ f", "Ġf o", "Ġfo x"]
    tokens.insert(-1, "Ġfo")
    return {token: index for index, token in enumerate(tokens)}, merges


def _backbone_and_tokenizer(family):
    """(backbone, tokenizer or None) of `family` with random weights."""
    models = keras_hub.models
    if family == "bert":
        return (models.BertBackbone(vocabulary_size=100, **SIZES),
                models.BertTokenizer(vocabulary=_wordpiece_vocabulary(), lowercase=True))
    if family == "electra":
        return (models.ElectraBackbone(vocab_size=100, embedding_dim=8, **SIZES),
                models.ElectraTokenizer(vocabulary=_wordpiece_vocabulary(), lowercase=True))
    if family == "albert":
        return (models.AlbertBackbone(vocabulary_size=100, embedding_dim=8, num_groups=2, num_inner_repetitions=2,
                                      **{**SIZES, "num_layers": 4}),
                models.AlbertTokenizer(proto=_sentencepiece_proto()))
    if family == "roberta":
        vocabulary, merges = _byte_level_files()
        return (models.RobertaBackbone(vocabulary_size=300, **SIZES),
                models.RobertaTokenizer(vocabulary=vocabulary, merges=merges))
    return (models.XLMRobertaBackbone(vocabulary_size=100, **SIZES),
            models.XLMRobertaTokenizer(proto=_sentencepiece_proto()))


@pytest.fixture(scope="module")
def presets(tmp_path_factory):
    """family -> (preset folder, backbone, keras-hub tokenizer)."""
    keras.utils.set_random_seed(0)
    made = {}
    for family in ("bert", "albert", "roberta", "electra", "xlmr"):
        folder = tmp_path_factory.mktemp(family)
        backbone, tokenizer = _backbone_and_tokenizer(family)
        backbone.save_to_preset(str(folder))
        tokenizer.save_to_preset(str(folder))
        made[family] = folder, backbone, tokenizer
    return made


@pytest.mark.parametrize("family", ["bert", "albert", "roberta", "electra", "xlmr"])
def test_converted_encoder_gives_the_backbones_outputs(presets, family, tmp_path, capsys):
    folder, backbone, tokenizer = presets[family]
    output = tmp_path / "converted" / "model.keras"
    assert main(["convert", "keras-hub", str(folder), "-o", str(output)]) == 0
    encoder = keras.models.load_model(output)
    assert encoder.config.vocab_size == backbone.token_embedding.input_dim
    inputs, _ = padded_batch(encoder.config.vocab_size, seed=1)
    inputs["segment_ids"] = np.minimum(inputs["segment_ids"], encoder.config.type_vocab_size - 1)
    ours = encoder(inputs, training=False)
    theirs = backbone({name: inputs[name] for name in backbone.input}, training=False)
    sequence = theirs["sequence_output"] if isinstance(theirs, dict) else theirs
    close_on_real_tokens(ours["sequence_output"], sequence, inputs["padding_mask"])
    if isinstance(theirs, dict):
        np.testing.assert_allclose(ours["pooled_output"], theirs["pooled_output"], atol=TOLERANCE, rtol=0)
    written = output.parent / "tokenizer"
    if family == "xlmr":
        assert not written.exists() and "no tokenizer written" in capsys.readouterr().out
    else:
        ids = load_pretrained_tokenizer(output).tokenize([TEXT]).to_list()[0]
        assert ids == np.asarray(tokenizer(TEXT)).tolist()


def test_keras_hub_xlmr_tokenizer_shifts_sentencepiece_ids(presets):
    """Why no tokenizer comes with an XLM-R preset: keras-hub's ids are the SentencePiece ids plus one."""
    folder, _, tokenizer = presets["xlmr"]
    assert json.loads((folder / "tokenizer.json").read_text())["class_name"] == "XLMRobertaTokenizer"
    processor = sentencepiece.SentencePieceProcessor(model_proto=(folder / "assets/tokenizer/vocabulary.spm").read_bytes())
    assert np.asarray(tokenizer("the fox")).tolist() == [piece + 1 for piece in processor.encode("the fox")]
