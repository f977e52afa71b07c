"""Missing or malformed tokenizer files raise errors that name the file and the problem."""

import pytest

from tfbert.text import BytePairTokenizer, SentencePieceTokenizer, WordPieceTokenizer, load_tokenizer


def test_missing_files_name_the_path(tmp_path):
    missing = tmp_path / "nope.txt"
    for build in (
        lambda: WordPieceTokenizer(missing),
        lambda: SentencePieceTokenizer(missing),
        lambda: BytePairTokenizer(missing, missing),
        lambda: BytePairTokenizer.from_tiktoken(missing),
        lambda: load_tokenizer(tmp_path),
    ):
        with pytest.raises(FileNotFoundError, match=str(tmp_path)):
            build()


def test_malformed_wordpiece_vocabulary(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty.txt is empty"):
        WordPieceTokenizer(empty)
    no_unk = tmp_path / "no_unk.txt"
    no_unk.write_text("[PAD]\nhello\n")
    with pytest.raises(ValueError, match=r"no_unk.txt lacks the unknown token '\[UNK\]'"):
        WordPieceTokenizer(no_unk)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="binary.txt is not valid UTF-8"):
        WordPieceTokenizer(binary)
    duplicated = tmp_path / "dup.txt"
    duplicated.write_text("[UNK]\na\na\n")
    with pytest.raises(ValueError, match="dup.txt has 1 duplicate"):
        WordPieceTokenizer(duplicated)


def test_malformed_sentencepiece_model(tmp_path):
    broken = tmp_path / "broken.model"
    broken.write_bytes(b"this is not a protobuf")
    with pytest.raises(ValueError, match="broken.model is not a valid SentencePiece model"):
        SentencePieceTokenizer(broken)


def test_malformed_byte_pair_files(tmp_path, assets):
    vocab = tmp_path / "vocab.json"
    vocab.write_text("{not json")
    with pytest.raises(ValueError, match="vocab.json is not valid JSON"):
        BytePairTokenizer(vocab, [])
    vocab.write_text('{"a": 0, "b": 5}')
    with pytest.raises(ValueError, match="vocab.json ids are not the distinct numbers"):
        BytePairTokenizer(vocab, [])
    vocab.write_text('{"a": 0, "b": 1}')
    with pytest.raises(ValueError, match="vocab.json lacks the single-byte token"):
        BytePairTokenizer(vocab, [])
    good = BytePairTokenizer.from_tiktoken(assets("bpe/gpt2.tiktoken"))
    good.save_assets(tmp_path / "gpt2")
    merges = tmp_path / "merges.txt"
    merges.write_text("#version: 0.2\nĠ t\nthree parts here\n")
    with pytest.raises(ValueError, match=r"merges.txt: merge 1 'three parts here' is not two tokens"):
        BytePairTokenizer(tmp_path / "gpt2" / "vocab.json", merges)
    ranks = tmp_path / "bad.tiktoken"
    ranks.write_text("IQ== 0\nnot-base64!! 1\n")
    with pytest.raises(ValueError, match="bad.tiktoken: line 2"):
        BytePairTokenizer.from_tiktoken(ranks)


def test_unknown_config_class(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text('{"class": "Mystery"}')
    with pytest.raises(ValueError, match="tokenizer_config.json: 'class' is 'Mystery', expected one of BytePairTokenizer, "
                                         "SentencePieceTokenizer, WordPieceTokenizer"):
        load_tokenizer(tmp_path)
