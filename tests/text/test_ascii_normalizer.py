"""The printable-ASCII normalization shortcut of the exact unigram path: sentencepiece's ids on
ASCII rows (where it applies), and off for models whose rules it does not know."""

import numpy as np
import sentencepiece
import tensorflow as tf
from sentencepiece import sentencepiece_model_pb2 as model_pb2

from tfbert.text import SentencePieceTokenizer
from tfbert.text._ascii_normalizer import AsciiNormalizer

UNIGRAM_MODELS = ["spm/botchan_en_unigram_1000.model", "spm/kyoto_ja_unigram_8000.model"]


def test_ascii_rows_give_sentencepiece_ids(assets):
    rng = np.random.default_rng(11)
    alphabet = list("     .,-!?'\"~`^_|abcdeAZ09")
    texts = ["".join(rng.choice(alphabet, int(rng.integers(0, 60)))) for _ in range(300)] + ["", " ", "  x  "]
    for model in UNIGRAM_MODELS:
        tokenizer = SentencePieceTokenizer(assets(model))
        assert tokenizer._exact._ascii is not None
        processor = sentencepiece.SentencePieceProcessor(model_file=str(assets(model)))
        assert tokenizer.tokenize(tf.constant(texts)).to_list() == processor.encode(texts)


def test_shortcut_normalizes_as_sentencepiece(assets):
    proto = assets(UNIGRAM_MODELS[0]).read_bytes()
    texts = ["  Hello   world ! ", "", "   ", "a~b"]
    expected = [sentencepiece.SentencePieceNormalizer(model_proto=proto).normalize(text) for text in texts]
    got = AsciiNormalizer.for_model(proto).normalize(tf.constant(texts)).numpy()
    assert [text.decode() for text in got] == expected


def test_shortcut_off_when_a_user_piece_holds_a_space(assets):
    model = model_pb2.ModelProto()
    model.ParseFromString(assets(UNIGRAM_MODELS[0]).read_bytes())
    piece = model.pieces.add()
    piece.piece, piece.type = "a b", 4
    assert AsciiNormalizer.for_model(model.SerializeToString()) is None
