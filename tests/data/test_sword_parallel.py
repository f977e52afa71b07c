"""SWORD zText modules (Debian sword-text-kjv/-sparv/-web) as plain verses, aligned and read back as parallel text."""

import pytest
import tensorflow as tf

from tfbert.data.parallel import count_lines, parallel_text_lines, parallel_tsv
from tfbert.data.sword import ZTextModule, aligned_verses, strip_markup, versification, write_parallel


@pytest.fixture(scope="module")
def modules(assets):
    folder = assets("sword/modules/texts/ztext")
    return {name: ZTextModule(folder / name) for name in ("engKJV2006eb", "spaRV1909eb", "engWEB2015eb")}


def test_markup_is_stripped_to_plain_text():
    assert strip_markup('<w lemma="strong:H0430">God</w><note placement="foot">a <i>note</i></note>created, '
                        '<title type="x-section">Heading</title>&amp; “he”') == "God created, & “he”"
    assert strip_markup('<title canonical="true" type="psalm">A Psalm.</title> Verse') == "A Psalm. Verse"
    assert strip_markup('Amen. <div sID="g1" type="glossary"/> Abba is a word.') == "Amen."


def test_versification_tables_count_the_kjv_verses():
    kjv = versification("KJV")
    assert len(kjv["ot"]) == 39 and len(kjv["nt"]) == 27
    assert sum(sum(counts) for books in kjv.values() for _, counts in books) == 31102
    with pytest.raises(ValueError, match="not tabulated"):
        versification("Vulg")


def test_kjv_module_reads_every_verse_with_its_reference(modules):
    kjv = modules["engKJV2006eb"]
    assert (kjv.name, kjv.versification, kjv.language) == ("engKJV2006eb", "KJV", "en")
    verses = list(kjv.verses())
    assert len(verses) == 31102
    assert verses[0].reference == "Gen.1.1"
    assert verses[0].text == "In the beginning God created the heaven and the earth."
    assert verses[-1].reference == "Rev.22.21"
    assert verses[-1].text == "The grace of our Lord Jesus Christ be with you all. Amen."
    assert not any("<" in verse.text or "strong:" in verse.text for verse in verses[:2000])


def test_kjv_and_reina_valera_align_verse_by_verse(modules, tmp_path):
    pairs = aligned_verses(modules["engKJV2006eb"], modules["spaRV1909eb"])
    count = write_parallel(pairs, tmp_path / "kjv.en", tmp_path / "rv.es", references=tmp_path / "refs")
    assert count == 31084  # RV 1909 leaves 18 KJV verses empty
    assert count_lines(tmp_path / "kjv.en") == count_lines(tmp_path / "rv.es") == count
    first = next(iter(parallel_text_lines(tmp_path / "kjv.en", tmp_path / "rv.es")))
    assert first[0].numpy().decode() == "In the beginning God created the heaven and the earth."
    assert first[1].numpy().decode() == "EN el principio crió Dios los cielos y la tierra."
    assert (tmp_path / "refs").read_text().splitlines()[count - 1] == "Rev.22.21"


def test_web_uses_nrsva_versification_and_drops_its_glossary(modules):
    web = modules["engWEB2015eb"]
    assert web.versification == "NRSVA"
    verses = {verse.reference: verse.text for verse in web.verses() if verse.book in ("Gen", "Tob", "Rev")}
    assert verses["Gen.1.1"] == "In the beginning, God created the heavens and the earth."
    assert verses["Rev.22.21"] == "The grace of the Lord Jesus Christ be with all the saints. Amen."
    assert "Tob.1.1" in verses


def test_missing_module_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        ZTextModule(tmp_path / "nope")


def test_parallel_files_of_different_lengths_fail(tmp_path):
    (tmp_path / "a").write_text("one\ntwo\n")
    (tmp_path / "b").write_text("uno\n")
    with pytest.raises(ValueError, match="not aligned"):
        parallel_text_lines(tmp_path / "a", tmp_path / "b")


def test_tsv_pairs_skip_empty_sides(tmp_path):
    (tmp_path / "p.tsv").write_text("hello\thola\n\t vacío\nbye\tadiós\textra\n")
    pairs = [(a.decode(), b.decode()) for a, b in parallel_tsv(tmp_path / "p.tsv").as_numpy_iterator()]
    assert pairs == [("hello", "hola"), ("bye", "adiós")]
    (tmp_path / "bad.tsv").write_text("no tab here\n")
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(parallel_tsv(tmp_path / "bad.tsv"))
