"""DeBERTa-v3's text side: a Hugging Face folder's `spm.model` and `[CLS] a [SEP] b [SEP]` packing, as
`transformers.DebertaV2Tokenizer` gives them (on the real botchan SentencePiece model of the test assets)."""

import shutil

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")

from tfbert.data.preprocessor import Preprocessor  # noqa: E402
from tfbert.tasks import encode_texts  # noqa: E402
from tfbert import artifacts  # noqa: E402
from tfbert.text import SentencePieceTokenizer  # noqa: E402

LENGTH = 24
TEXTS = ["Ada Lovelace wrote the first program.", "hello", "I was so angry that I threw the cat out of the window "
         "and then went to school as if nothing had happened at all.", "x y"]
PAIRS = ["Who wrote it?", "The master of the school, whom we called Badger, came in laughing loudly.", "z",
         "The second sentence is long enough to be cut when it is packed with the first one here."]


@pytest.fixture(scope="module")
def deberta_folder(assets, tmp_path_factory):
    """A DeBERTa-style Hugging Face tokenizer folder: `spm.model` (botchan unigram), cased."""
    folder = tmp_path_factory.mktemp("deberta_tokenizer")
    shutil.copy(assets("spm/botchan_en_unigram_1000.model"), folder / "spm.model")
    (folder / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    return folder


def test_packing_matches_debertav2_tokenizer(deberta_folder):
    reference = transformers.DebertaV2Tokenizer.from_pretrained(str(deberta_folder))
    # botchan's model has no [CLS]/[SEP]/[PAD] pieces (DeBERTa-v3's has): transformers appends them; here
    # <s>/</s> stand in, and <unk> pads (padding lies outside the compared tokens).
    tokenizer = SentencePieceTokenizer(deberta_folder / "spm.model", special_tokens={"pad": "<unk>"})
    ours_of = {reference.cls_token_id: tokenizer.cls_id, reference.sep_token_id: tokenizer.sep_id}
    preprocessor = Preprocessor.for_architecture("deberta", tokenizer, LENGTH)
    for pairs in (None, PAIRS):
        features = encode_texts(preprocessor, TEXTS, pairs)
        expected = reference(TEXTS, pairs, max_length=LENGTH, truncation="longest_first")
        for row, ids in enumerate(expected["input_ids"]):
            real = features["padding_mask"][row].astype(bool)
            assert real.sum() == len(ids)
            assert features["token_ids"][row][real].tolist() == [ours_of.get(i, i) for i in ids]
            assert features["segment_ids"][row][real].tolist() == expected["token_type_ids"][row]
        assert not np.any(features["padding_mask"][:, len(max(expected["input_ids"], key=len)):])


def test_a_huggingface_deberta_folder_gives_its_sentencepiece_cased(deberta_folder):
    tokenizer = artifacts.open(deberta_folder).tokenizer
    assert isinstance(tokenizer, SentencePieceTokenizer) and not tokenizer.lowercase
    assert tokenizer.tokenize(["Ada"]).to_list()[0] == SentencePieceTokenizer(deberta_folder / "spm.model").tokenize(
        ["Ada"]).to_list()[0]
