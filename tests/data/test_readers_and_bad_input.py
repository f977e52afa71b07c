"""Document readers (text lines, TFRecord, TFDS) and malformed input through the whole pipeline."""

from __future__ import annotations

import pytest
import tensorflow as tf

from tfbert.data.masking import MaskedLMMasker
from tfbert.data.packing import SegmentPacker
from tfbert.data.pretraining import pretraining_dataset
from tfbert.data.readers import split_sentences, text_line_documents, tfds_documents, tfrecord_documents


def documents_of(ds):
    return [[s.decode() for s in doc] for doc in ds.as_numpy_iterator()]


def test_blank_lines_separate_documents_and_files(tmp_path):
    (tmp_path / "a.txt").write_text("One.\nTwo.\n\n \t \n\nThree.\n")
    (tmp_path / "b.txt").write_text("Four.\n\nFive.")
    docs = documents_of(text_line_documents([tmp_path / "a.txt", tmp_path / "b.txt"]))
    assert docs == [["One.", "Two."], ["Three."], ["Four."], ["Five."]]
    assert documents_of(text_line_documents(str(tmp_path / "*.txt"))) == docs
    assert documents_of(text_line_documents(tmp_path / "a.txt", max_document_sentences=1)) == [
        ["One."], ["Two."], ["Three."]]


def test_one_document_per_line_with_sentence_split(tmp_path):
    (tmp_path / "docs.txt").write_text("It rained. We stayed in!\n\n   \nA (short) one? Yes.\n")
    docs = documents_of(text_line_documents(tmp_path / "docs.txt", one_document_per_line=True))
    assert docs == [["It rained.", "We stayed in!"], ["A (short) one?", "Yes."]]
    assert split_sentences(tf.constant("a\n\n b "), "newline").numpy().tolist() == [b"a", b"b"]


def test_tfrecord_documents(tmp_path):
    path = str(tmp_path / "docs.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for record in ["First line\nsecond line", "", "Only one"]:
            writer.write(record.encode())
    assert documents_of(tfrecord_documents(path)) == [["First line", "second line"], ["Only one"]]


def test_tfds_documents(tmp_path):
    import tensorflow_datasets as tfds

    class TinyCorpus(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict({"text": tfds.features.Text()}))

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples()}

        def _generate_examples(self):
            for i, text in enumerate(["Alpha one.\nAlpha two.", "Beta."]):
                yield i, {"text": text}

    docs = documents_of(tfds_documents("tiny_corpus", data_dir=str(tmp_path), download=True))
    assert sorted(docs) == [["Alpha one.", "Alpha two."], ["Beta."]]


@pytest.mark.parametrize("objective", ["nsp", "sop", "full_sentences", "doc_sentences"])
def test_bad_input_gives_well_formed_batches(tmp_path, wordpiece, objective):
    huge_line = ("word " * 200_000)[:1_000_000]
    long_document = " ".join(["a rather long sentence that goes on"] * 200)
    text = "\n".join(["", "   ", "\t", "", "", huge_line, "", "", "short.", "", "\u200b", "",
                      long_document, "x", "", "", "y z", "\x00\x01", ""]) + "\n"
    path = tmp_path / "bad.txt"
    path.write_text(text)
    packer = SegmentPacker(128, wordpiece.cls_id, wordpiece.sep_id, wordpiece.pad_id, style="bert")
    masker = MaskedLMMasker.for_tokenizer(wordpiece, max_predictions=5, unit="span", word_scheme="wordpiece")
    readers = [text_line_documents(path)]
    if objective == "nsp":
        readers.append(text_line_documents(path, one_document_per_line=True))
    for docs in readers:
        ds = pretraining_dataset(docs, wordpiece, objective=objective, packer=packer, masker=masker,
                                 batch_size=4, seed=1)
        batches = list(ds.as_numpy_iterator())
        assert batches, "the long inputs alone give several examples"
        for batch in batches:
            assert batch["token_ids"].shape == (4, 128)
            assert batch["masked_positions"].shape == (4, 5)
            assert (batch["token_ids"][:, 0] == wordpiece.cls_id).all()
            assert ((batch["token_ids"] >= 0) & (batch["token_ids"] < len(wordpiece.vocab))).all()
            assert (batch["masked_weights"].sum(axis=1) <= 5).all()


def test_empty_corpus_gives_no_batches(tmp_path, wordpiece):
    path = tmp_path / "empty.txt"
    path.write_text("\n \n\t\n")
    packer = SegmentPacker(16, wordpiece.cls_id, wordpiece.sep_id, wordpiece.pad_id, style="bert")
    masker = MaskedLMMasker.for_tokenizer(wordpiece, max_predictions=3)
    ds = pretraining_dataset(text_line_documents(path), wordpiece, objective="sop", packer=packer,
                             masker=masker, batch_size=2, seed=0)
    assert list(ds.as_numpy_iterator()) == []
