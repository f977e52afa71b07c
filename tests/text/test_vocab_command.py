"""`tfbert vocab add`, `tfbert vocab stats` and `tfbert vocab --pre-tokenize mecab` on real text."""

import json
import sys

import pytest

from tfbert.cli import main
from tfbert.text import SentencePieceTokenizer, load_tokenizer


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("tfbert vocab: error: ") and err.count("\n") == 1
    return err


@pytest.fixture(scope="module")
def korean_text(korean_lines, tmp_path_factory):
    path = tmp_path_factory.mktemp("ko") / "ko.txt"
    path.write_text("\n".join(korean_lines[:1500]) + "\n", encoding="utf-8")
    return path


def _stats(capsys, tokenizer, data) -> dict:
    assert main(["vocab", "stats", str(tokenizer), "--data", str(data), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_vocab_add_then_stats_shows_fewer_pieces_and_leaves_the_tokenizer_alone(assets, tmp_path, capsys):
    original = tmp_path / "spm"
    SentencePieceTokenizer(assets("spm/botchan_en_unigram_1000.model")).save_assets(original)
    before_bytes = {path.name: path.read_bytes() for path in original.iterdir()}
    words = tmp_path / "words.txt"
    words.write_text("madonna\nshikoku\n\nthe\nmadonna\n", encoding="utf-8")
    text = tmp_path / "text.txt"
    text.write_text("The madonna went to shikoku.\nShe saw the madonna in shikoku\n", encoding="utf-8")
    before = _stats(capsys, original, text)

    assert main(["vocab", "add", str(original), "--tokens", str(words), "--output", str(tmp_path / "grown")]) == 0
    out = capsys.readouterr().out
    assert "1,002 tokens (2 added as ids 1,000-1,001; old ids unchanged)" in out
    assert "already in the vocabulary, not added (1): the" in out and "--init-from RUN --tokenizer" in out
    assert {path.name: path.read_bytes() for path in original.iterdir()} == before_bytes
    grown = load_tokenizer(tmp_path / "grown")
    assert grown.vocabulary()[:1000] == load_tokenizer(original).vocabulary()
    after = _stats(capsys, tmp_path / "grown", text)
    assert after["words"] == before["words"] == 11
    assert after["pieces_per_word"] < before["pieces_per_word"] and after["coverage"] > before["coverage"]

    assert main(["vocab", "stats", str(tmp_path / "grown"), "--data", str(text)]) == 0
    assert "pieces per word" in capsys.readouterr().out


def test_vocab_add_and_stats_bad_input(assets, tmp_path, capsys):
    original = tmp_path / "spm"
    SentencePieceTokenizer(assets("spm/botchan_en_bpe_1000.model")).save_assets(original)
    words = tmp_path / "words.txt"
    words.write_text("two words\n", encoding="utf-8")
    assert main(["vocab", "add", str(original), "--tokens", str(words), "--output", str(tmp_path / "new")]) == 2
    assert "line 1 'two words' holds a space; give one word a line" in _error(capsys)
    assert not (tmp_path / "new").exists()
    assert main(["vocab", "add", str(original), "--tokens", str(words), "--output", str(original)]) == 2
    assert "already exists (a folder); nothing was changed: give another --output, or add --overwrite" in _error(capsys)
    assert main(["vocab", "add", str(tmp_path), "--tokens", str(words), "--output", str(tmp_path / "new")]) == 2
    assert "give a folder written by `tfbert vocab`" in _error(capsys)
    assert main(["vocab", "stats", str(original), "--data", str(tmp_path / "none.txt")]) == 2
    assert "'" + str(tmp_path / "none.txt") + "' does not exist" in _error(capsys)
    assert main(["vocab", "--data", str(words)]) == 2
    assert "--kind is required to train a vocabulary" in _error(capsys)


def test_mecab_pre_tokenized_sentencepiece_tokenizes_raw_korean_text(korean_text, tmp_path, capsys):
    pytest.importorskip("mecab", reason="python-mecab-ko (pip install 'tfbert[mecab]') is not installed")
    arguments = ["vocab", "--kind", "sentencepiece", "--data", str(korean_text), "--vocab-size", "800"]
    assert main([*arguments, "--output", str(tmp_path / "plain")]) == 0
    assert main([*arguments, "--output", str(tmp_path / "mecab"), "--pre-tokenize", "mecab"]) == 0
    assert "with 800 tokens" in capsys.readouterr().out
    plain, mecab = _stats(capsys, tmp_path / "plain", korean_text), _stats(capsys, tmp_path / "mecab", korean_text)
    assert mecab["vocabulary_size"] == plain["vocabulary_size"] == 800
    assert mecab["words"] == plain["words"] and mecab["unknown_rate"] < 0.01
    pieces = set(load_tokenizer(tmp_path / "mecab").vocabulary())
    assert "\u2581은" in pieces and "\u2581을" in pieces  # particles, split off by mecab, are pieces of their own


def test_pre_tokenize_without_mecab_names_the_extra(korean_text, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "mecab", None)
    assert main(["vocab", "--kind", "wordpiece", "--data", str(korean_text), "--vocab-size", "500",
                 "--output", str(tmp_path / "v"), "--pre-tokenize", "mecab"]) == 2
    assert "pip install 'tfbert[mecab]'" in _error(capsys)


def test_vocab_keeps_the_text_after_a_nul_byte_and_still_refuses_a_binary(botchan_lines, tmp_path, capsys):
    corpus = tmp_path / "nul.txt"
    corpus.write_bytes(b"".join(line.encode() + b"\0zyzzyva quokka\n" for line in botchan_lines[:400]))
    assert main(["vocab", "--kind", "sentencepiece", "--data", str(corpus), "--vocab-size", "300",
                 "--output", str(tmp_path / "spm")]) == 0
    assert {"\u2581quokka", "zyzzyva"} & set(load_tokenizer(tmp_path / "spm").vocabulary())
    assert main(["vocab", "--kind", "sentencepiece", "--data", "/bin/ls", "--vocab-size", "300",
                 "--output", str(tmp_path / "ls")]) == 2
    assert "/bin/ls line 1: not valid UTF-8" in _error(capsys) and not (tmp_path / "ls").exists()
