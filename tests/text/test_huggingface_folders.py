"""`load_tokenizer` reads every kind of Hugging Face tokenizer folder with `transformers`' ids."""

import json
import shutil

import pytest
import sentencepiece

transformers = pytest.importorskip("transformers")

from tfbert import artifacts  # noqa: E402
from tfbert.text import BytePairTokenizer, load_tokenizer, train_sentencepiece  # noqa: E402
from tfbert.text.huggingface_folders import fairseq_layout  # noqa: E402

LATIN = ["Hello, World! The naïve café opened in 1999, didn't it?", "Ça coûte 5 € ÅÉÎ straße", "double  spaces  here"]
KINDS = ["vocab.txt (real MiniLM)", "tokenizer.json alone, WordPiece", "spiece.model, keep_accents",
         "spiece.model, ALBERT defaults", "sentencepiece.bpe.model (XLM-R)", "tokenizer.json alone, unigram",
         "vocab.json + merges.txt", "tokenizer.json alone, byte-level BPE"]


def _folder(root, name, files, settings=None):
    folder = root / name
    folder.mkdir()
    for target, source in files.items():
        shutil.copyfile(source, folder / target)
    if settings is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(settings), encoding="utf-8")
    return folder


def _saved_by_transformers(folder, root, name):
    """A folder holding only the tokenizer.json that `transformers` writes for `folder`."""
    transformers.AutoTokenizer.from_pretrained(folder).save_pretrained(root / f"{name}-saved")
    return _folder(root, name, {"tokenizer.json": root / f"{name}-saved" / "tokenizer.json"})


@pytest.fixture(scope="module")
def folders(assets, korean_lines, tmp_path_factory):
    root = tmp_path_factory.mktemp("hf-tokenizers")
    (root / "korean.txt").write_text("\n".join(korean_lines[:3000]), encoding="utf-8")
    korean = train_sentencepiece(root / "korean.txt", 1000, root / "korean") and root / "korean" / "spiece.model"
    BytePairTokenizer.from_tiktoken(assets("bpe/gpt2.tiktoken")).save_assets(root / "gpt2")
    minilm = assets("minilm/tokenizer.json").parent
    xlmr = _folder(root, "xlmr", {"sentencepiece.bpe.model": assets("spm/kyoto_ja_unigram_8000.model")},
                   {"tokenizer_class": "XLMRobertaTokenizer"})
    gpt2 = _folder(root, "gpt2-hf", {"vocab.json": root / "gpt2" / "vocab.json", "merges.txt": root / "gpt2" / "merges.txt"},
                   {"tokenizer_class": "GPT2Tokenizer"})
    return {
        KINDS[0]: minilm,
        KINDS[1]: _folder(root, "wordpiece-json", {"tokenizer.json": minilm / "tokenizer.json"}),
        KINDS[2]: _folder(root, "albert-keep", {"spiece.model": korean},
                          {"tokenizer_class": "AlbertTokenizer", "keep_accents": True, "do_lower_case": False}),
        KINDS[3]: _folder(root, "albert", {"spiece.model": korean}, {"tokenizer_class": "AlbertTokenizer"}),
        KINDS[4]: xlmr,
        KINDS[5]: _saved_by_transformers(xlmr, root, "unigram-json"),
        KINDS[6]: gpt2,
        KINDS[7]: _saved_by_transformers(gpt2, root, "bpe-json"),
    }


@pytest.mark.parametrize("kind", KINDS)
def test_load_tokenizer_gives_the_ids_of_transformers(folders, korean_lines, kind):
    # transformers' fast ALBERT tokenizer maps NFKD-decomposed Hangul to <unk>, sentencepiece recomposes it:
    # with ALBERT's accent stripping, Hangul is compared only where both keep it (keep_accents).
    texts = LATIN + ([] if kind == "spiece.model, ALBERT defaults" else korean_lines[:40:4] + ["日本語のテキスト"])
    ours = load_tokenizer(folders[kind]).tokenize(texts).to_list()
    theirs = transformers.AutoTokenizer.from_pretrained(folders[kind])(texts, add_special_tokens=False)["input_ids"]
    assert ours == theirs


def test_an_xlmr_model_is_read_in_fairseqs_id_layout(assets, folders):
    tokenizer = load_tokenizer(folders["sentencepiece.bpe.model (XLM-R)"])
    special = {role: tokenizer.token_to_id(token) for role, token in tokenizer.special_tokens.items() if token}
    assert special == {"cls": 0, "pad": 1, "sep": 2, "unk": 3, "mask": tokenizer.vocabulary_size() - 1,
                       "bos": 0, "eos": 2}
    original = sentencepiece.SentencePieceProcessor(model_proto=assets("spm/kyoto_ja_unigram_8000.model").read_bytes())
    shifted = sentencepiece.SentencePieceProcessor(model_proto=fairseq_layout(original.serialized_model_proto()))
    pieces = range(3, original.GetPieceSize())
    assert [shifted.IdToPiece(index + 1) for index in pieces] == [original.IdToPiece(index) for index in pieces]
    assert [shifted.GetScore(index + 1) for index in pieces] == [original.GetScore(index) for index in pieces]


def test_finetune_and_export_find_a_huggingface_folders_tokenizer(folders):
    tokenizer = artifacts.open(folders["spiece.model, ALBERT defaults"]).tokenizer
    assert tokenizer.lowercase and tokenizer.strip_accents
    assert tokenizer.special_tokens["mask"] == "[MASK]"
