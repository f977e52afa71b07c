"""The distillation's parallel files and the student-vocabulary check."""

import pytest

from tfbert.data.local_files import DataFileError
from tfbert.finetuning.distillation import read_parallel, vocabulary_coverage
from tfbert.text import SentencePieceTokenizer, WordPieceTokenizer


def test_parallel_text_from_one_tsv_or_two_aligned_files(tmp_path):
    (tmp_path / "en-ko.tsv").write_text("In the beginning\t태초에\n\nAmen.\t아멘\n", encoding="utf-8")
    assert read_parallel([tmp_path / "en-ko.tsv"]) == (["In the beginning", "Amen."], ["태초에", "아멘"])
    (tmp_path / "en.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "es.txt").write_text("x\ny\n", encoding="utf-8")
    assert read_parallel([tmp_path / "en.txt", tmp_path / "es.txt"]) == (["a", "b"], ["x", "y"])
    (tmp_path / "bad.tsv").write_text("a\tb\nno tab here\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"bad.tsv, line 2: expected 'source<TAB>target' with two non-empty sides"):
        read_parallel([tmp_path / "bad.tsv"])
    (tmp_path / "gap.txt").write_text("x\n\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"gap.txt, line 2: empty line where the other file has a sentence"):
        read_parallel([tmp_path / "en.txt", tmp_path / "gap.txt"])


def test_an_english_vocabulary_reading_korean_is_flagged_and_spanish_is_not(assets):
    english = WordPieceTokenizer(assets("minilm/vocab.txt"))
    korean = [line for line in assets("text/ko/constitution.txt").read_text(encoding="utf-8").splitlines() if line][:50]
    coverage = vocabulary_coverage(english, korean)
    assert coverage.words > 100 and coverage.lost > 0.5
    assert "tfbert vocab add" in coverage.warning() and "multilingual" in coverage.warning()
    spanish = ["En el principio creó Dios los cielos y la tierra.", "Y la tierra estaba desordenada y vacía."]
    assert vocabulary_coverage(english, spanish).warning() is None
    japanese = SentencePieceTokenizer(assets("spm/kyoto_ja_unigram_8000.model"))
    assert vocabulary_coverage(japanese, korean).warning() is not None
