"""Fine-tuning features and the export's `preprocess` signature give the same encoder inputs, for every architecture.

Both go through the architecture's `Preprocessor`: the NumPy features of `tfbert.tasks.encode_texts` (ids
from the `PieceTokenizer` adapter) and the concrete `preprocess` function an export saves
(`tfbert.export.module.PreprocessingModule`), on single texts and pairs, short and longer than the sequence.
The same check on a saved and reloaded SavedModel is in test_round_trip.py.
"""

import numpy as np
import pytest
import tensorflow as tf

from tfbert import architectures
from tfbert.data.preprocessor import Preprocessor
from tfbert.export.module import PreprocessingModule
from tfbert.tasks import encode_texts

pytestmark = pytest.mark.end_to_end

SEQUENCE_LENGTH = 24
LONG = ("The first program was written by Ada Lovelace in 1843, long before any machine could run it, "
        "and it computed Bernoulli numbers on the analytical engine that Babbage designed.")
TEXTS = ["Ada Lovelace wrote the first program.", "hello", "Straße in 東京, naïve café!", LONG, LONG, "x y"]
PAIRS = ["Who wrote it?", LONG, "", "a short answer", LONG + " again", "z"]


@pytest.fixture(scope="module")
def tokenizers(assets, tmp_path_factory):
    """One tokenizer of each kind, with the special tokens packing needs (cls, sep, pad)."""
    from tfbert.text import WordPieceTokenizer
    from tfbert.text.vocab_training import train_byte_bpe, train_sentencepiece

    folder = tmp_path_factory.mktemp("tokenizers")
    corpus = str(assets("text/botchan.txt"))
    return {
        "wordpiece": WordPieceTokenizer(assets("minilm/vocab.txt")),
        "sentencepiece": train_sentencepiece(corpus, 400, folder / "spm", lowercase=True,
                                             control_tokens=("[CLS]", "[SEP]", "[MASK]", "<pad>")),
        "byte_bpe": train_byte_bpe(corpus, 400, folder / "bpe"),
    }


def preprocess_signature(preprocessor: Preprocessor, pair: bool) -> tf.types.experimental.ConcreteFunction:
    """The `preprocess` signature an export of `preprocessor` saves."""
    return PreprocessingModule(preprocessor, pair=pair).signatures()["preprocess"]


def architecture_groups() -> dict[str, list[str]]:
    """Every registered architecture, grouped by what its preprocessor depends on: tokenizer kind and packing style."""
    groups: dict[tuple[str, str], list[str]] = {}
    for name in architectures.names():
        spec = architectures.get(name)
        groups.setdefault((spec.tokenizer, spec.packing_style), []).append(name)
    return {"+".join(names): names for names in groups.values()}


@pytest.mark.parametrize("names", architecture_groups().values(), ids=architecture_groups().keys())
def test_fine_tuning_features_equal_the_exported_preprocess(names, tokenizers):
    preprocessors = [Preprocessor.for_architecture(name, tokenizers[architectures.get(name).tokenizer],
                                                   SEQUENCE_LENGTH) for name in names]
    assert len({(p.packing_style, p.sequence_length, id(p.tokenizer)) for p in preprocessors}) == 1
    preprocessor, spec = preprocessors[0], architectures.get(names[0])
    for pair in (False, True):
        served = preprocess_signature(preprocessor, pair)
        strings = {"text": tf.constant(TEXTS)} | ({"text_pair": tf.constant(PAIRS)} if pair else {})
        outputs = {name: value.numpy() for name, value in served(**strings).items()}
        features = encode_texts(preprocessor, TEXTS, PAIRS if pair else None)
        assert features["token_ids"].tolist() == outputs["input_word_ids"].tolist()
        assert features["segment_ids"].tolist() == outputs["input_type_ids"].tolist()
        assert features["padding_mask"].tolist() == outputs["input_mask"].tolist()
        assert features["padding_mask"][3].all(), "the long text fills the sequence"
    tokenizer = preprocessor.tokenizer
    first, second = (tokenizer.tokenize(tf.constant([text])).to_list()[0] for text in (TEXTS[-1], PAIRS[-1]))
    if spec.packing_style == "roberta":
        expected = [tokenizer.cls_id, *first, tokenizer.sep_id, tokenizer.sep_id, *second, tokenizer.sep_id]
        expected_types = [0] * len(expected)
    else:
        expected = [tokenizer.cls_id, *first, tokenizer.sep_id, *second, tokenizer.sep_id]
        expected_types = [0] * (len(first) + 2) + [1] * (len(second) + 1)
    assert features["token_ids"][-1, :len(expected)].tolist() == expected
    assert features["segment_ids"][-1, :len(expected)].tolist() == expected_types
    assert np.all(features["segment_ids"] < max(1, spec.encoder_defaults.get("type_vocab_size", 2)))
