"""The bundled World English Bible corpus: size, layout, attribution and a reproducible build."""

import gzip
from pathlib import Path

import tfbert.corpus
from tfbert.corpus import build


def test_bundled_corpus_is_real_compressed_prose_with_attribution():
    path = tfbert.corpus.path()
    assert path.name == "web.txt.gz" and path.stat().st_size < 1_500_000
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    assert len(text) > 3_000_000
    assert text.startswith("In the beginning, God created the heavens and the earth.\nThe earth was formless and empty.\n")
    assert text.count("\n\n") == 1189  # a chapter a document
    attribution = (Path(tfbert.corpus.__file__).parent / "ATTRIBUTION.md").read_text()
    assert "Public Domain" in attribution and "sword-text-web" in attribution


def test_documents_are_chapters_of_sentences():
    documents = tfbert.corpus.documents()
    first = next(iter(documents)).numpy().tolist()
    assert first[0] == "In the beginning, God created the heavens and the earth.".encode()
    assert len(first) > 20 and all(sentence.strip() == sentence and sentence for sentence in first)
    assert next(iter(tfbert.corpus.lines())) == first[0].decode()


def test_build_reproduces_the_committed_file(assets, tmp_path):
    counts = build.build(assets("sword/modules/texts/ztext/engWEB2015eb"), tmp_path / "web.txt.gz")
    assert counts["documents"] == 1189
    assert (tmp_path / "web.txt.gz").read_bytes() == tfbert.corpus.path().read_bytes()


def test_sentence_split_keeps_quotes_with_their_sentence():
    assert build.split_sentences("He said, “Go.” They went. 3 came? no") == ["He said, “Go.”", "They went.", "3 came? no"]


def test_chapters_and_a_held_out_split(tmp_path):
    chapters = tfbert.corpus.chapters()
    assert len(chapters) == 1189 and chapters[0][0] == "In the beginning, God created the heavens and the earth."
    train, held_out = tfbert.corpus.write_held_out_split(chapters, tmp_path, held_out_index=9)
    held_out_blocks = held_out.read_text(encoding="utf-8").strip().split("\n\n")
    assert len(held_out_blocks) == 118 and len(train.read_text(encoding="utf-8").strip().split("\n\n")) == 1071
    assert held_out_blocks[0] == "\n".join(chapters[9]) and held_out_blocks[1] == "\n".join(chapters[19])
