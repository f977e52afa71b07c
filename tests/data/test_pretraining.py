"""Pretraining example builders on real documents: NSP, SOP, FULL-/DOC-SENTENCES, short sequences."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfbert.data.masking import MaskedLMMasker
from tfbert.data.packing import SegmentPacker
from tfbert.data.pretraining import (
    LABEL_KEYS, TWO_SEGMENT_OBJECTIVES, contiguous_examples, pair_examples, pretraining_dataset, sentence_pairs, tokenize_documents)
from tfbert.data.readers import text_line_documents

MAX_TOKENS = 125


@pytest.fixture(scope="module")
def lee_tokenized(wordpiece, lee_documents_path):
    documents = text_line_documents(lee_documents_path, one_document_per_line=True)
    return tokenize_documents(documents, wordpiece, MAX_TOKENS)


@pytest.fixture(scope="module")
def lee_stream(lee_tokenized):
    """All documents' token ids as one string, documents separated by " | "."""
    return " " + " | ".join(" ".join(map(str, d.flat_values.numpy())) for d in lee_tokenized) + " "


def as_text(*parts) -> str:
    return " " + " ".join(map(str, np.concatenate(parts))) + " "


def document_of(text: str, stream: str) -> int:
    """Index of the document holding `text` (-1 when it is not contiguous text of one document)."""
    at = stream.find(text)
    return -1 if at < 0 else stream.count(" | ", 0, at)


def collect_pairs(lee_tokenized, objective, seed=3, epochs=2):
    ds = pair_examples(lee_tokenized, objective=objective, max_num_tokens=MAX_TOKENS, seed=seed)
    pairs = []
    for _ in range(epochs):
        pairs += [(p["first"], p["second"], int(p["label"])) for p in ds.as_numpy_iterator()]
    return pairs


def test_nsp_balance_and_is_next_pairs_are_consecutive(lee_tokenized, lee_stream):
    pairs = collect_pairs(lee_tokenized, "nsp")
    labels = np.array([label for _, _, label in pairs])
    print(f"NSP: {len(pairs)} pairs, random-next share {labels.mean():.4f}")
    assert len(pairs) > 1000
    assert abs(labels.mean() - 0.5) < 0.03
    for first, second, label in pairs:
        if label == 0:
            assert document_of(as_text(first, second), lee_stream) >= 0
    not_next = [(f, s) for f, s, label in pairs if label == 1]
    consecutive = sum(document_of(as_text(f, s), lee_stream) >= 0 for f, s in not_next)
    assert consecutive / len(not_next) < 0.01
    # The random second segment comes from another document.
    same_document = sum(document_of(as_text(f), lee_stream) == document_of(as_text(s), lee_stream) for f, s in not_next)
    assert same_document / len(not_next) < 0.01


def test_sop_balance_and_swapped_pairs_are_swapped(lee_tokenized, lee_stream):
    pairs = collect_pairs(lee_tokenized, "sop")
    labels = np.array([label for _, _, label in pairs])
    print(f"SOP: {len(pairs)} pairs, swapped share {labels.mean():.4f}")
    assert abs(labels.mean() - 0.5) < 0.03
    for first, second, label in pairs:
        in_order = (first, second) if label == 0 else (second, first)
        assert document_of(as_text(*in_order), lee_stream) >= 0
    # Swapped pairs read as text that does not occur (short pieces such as "." may recur by chance).
    swapped = [(f, s) for f, s, label in pairs if label == 1]
    occurring = sum(document_of(as_text(f, s), lee_stream) >= 0 for f, s in swapped)
    assert occurring / len(swapped) < 0.01


def test_short_sequence_rate(lee_tokenized, wordpiece):
    def pairs(document, seed):
        out = sentence_pairs(document, document, seed, objective="sop", max_num_tokens=MAX_TOKENS)
        return out["target_length"], out["first"].row_lengths() + out["second"].row_lengths()

    targets, lengths = [], []
    for epoch in range(4):
        # A new seed stream each pass: four independent draws per document, not one draw seen four times.
        seeds = tf.data.Dataset.random(seed=11 + epoch).batch(2)
        for target, length in tf.data.Dataset.zip((lee_tokenized, seeds)).map(pairs):
            targets.append(target.numpy())
            lengths.append(length.numpy())
    targets = np.concatenate(targets)
    short = targets < MAX_TOKENS
    print(f"short-sequence rate {short.mean():.4f} over {len(targets)} chunks")
    assert abs(short.mean() - 0.1) < 0.02
    assert targets.min() >= 2
    # A short target really shortens the chunk: it stops at the first sentence reaching the target.
    assert np.median(np.concatenate(lengths)[short]) < 0.75 * MAX_TOKENS


def test_full_sentences_cross_documents_doc_sentences_do_not(lee_tokenized, wordpiece):
    docs = [d for d in lee_tokenized.take(40)]
    subset = lee_tokenized.take(40)
    sep = wordpiece.sep_id
    full = [c for c in contiguous_examples(subset, max_num_tokens=MAX_TOKENS, cross_documents=True,
                                           separator_id=sep).as_numpy_iterator()]
    per_doc = [c for c in contiguous_examples(subset, max_num_tokens=MAX_TOKENS, cross_documents=False,
                                              separator_id=sep).as_numpy_iterator()]
    flat_docs = [d.flat_values.numpy() for d in docs]
    # FULL-SENTENCES: the chunks, read in order, are the documents, with a separator
    # wherever a document ends inside a chunk (and only there).
    stream = np.concatenate(full)
    np.testing.assert_array_equal(stream[stream != sep], np.concatenate(flat_docs))
    doc_ends = set(np.cumsum([len(d) for d in flat_docs]))
    separator_offsets = np.flatnonzero(stream == sep) - np.arange(np.sum(stream == sep))
    assert set(separator_offsets) <= doc_ends
    assert not any(c[0] == sep or c[-1] == sep for c in full)
    assert max(len(c) for c in full) <= MAX_TOKENS
    assert sum(sep in c[1:-1] for c in full) > 10
    # DOC-SENTENCES: no separators, every chunk lies inside one document, and they read back in order.
    assert not any(sep in c for c in per_doc)
    np.testing.assert_array_equal(np.concatenate(per_doc), np.concatenate(flat_docs))
    assert all(any(as_text(c) in as_text(d) for d in flat_docs) for c in per_doc[:50])
    assert len(per_doc) > len(full)
    # Chunks hold whole sentences: every chunk boundary is a sentence boundary.
    sentence_ends = set(np.cumsum(np.concatenate([d.row_lengths().numpy() for d in docs])))
    assert set(np.cumsum([len(c) for c in per_doc])) <= sentence_ends


@pytest.mark.parametrize("objective", ["nsp", "sop", "full_sentences", "doc_sentences", "electra_segments"])
def test_end_to_end_batches(objective, wordpiece, lee_documents_path):
    style = "bert" if objective in TWO_SEGMENT_OBJECTIVES else "roberta"
    packer = SegmentPacker(128, wordpiece.cls_id, wordpiece.sep_id, wordpiece.pad_id, style=style)
    masker = MaskedLMMasker.for_tokenizer(wordpiece, max_predictions=20, unit="whole_word", word_scheme="wordpiece")
    documents = text_line_documents(lee_documents_path, one_document_per_line=True)
    ds = pretraining_dataset(documents, wordpiece, objective=objective, packer=packer, masker=masker,
                             batch_size=16, seed=0)
    for name, spec in ds.element_spec.items():
        assert spec.shape[0] == 16, name
    batches = list(ds.take(3).as_numpy_iterator())
    again = list(ds.take(3).as_numpy_iterator())
    batch = batches[-1]
    assert batch["token_ids"].shape == (16, 128) and batch["masked_positions"].shape == (16, 20)
    assert (batch["token_ids"][:, 0] == wordpiece.cls_id).all()
    if objective in LABEL_KEYS:
        assert set(np.unique(batch[LABEL_KEYS[objective]])) <= {0, 1}
        assert (batch["segment_ids"].max(axis=1) == 1).all()
    elif objective == "electra_segments":
        two_segments = np.concatenate([b["segment_ids"].max(axis=1) for b in batches])
        assert 0.7 < two_segments.mean() < 1.0, "about 10% of the examples are one segment"
        assert not set(batch) & set(LABEL_KEYS.values())
    else:
        assert (batch["segment_ids"] == 0).all()
    # Same seed, same iteration number: identical.
    fresh = pretraining_dataset(documents, wordpiece, objective=objective, packer=packer, masker=masker,
                                batch_size=16, seed=0)
    first = next(iter(fresh.as_numpy_iterator()))
    for key in first:
        np.testing.assert_array_equal(first[key], batches[0][key])
    assert not np.array_equal(again[0]["masked_positions"], batches[0]["masked_positions"])


def test_shuffle_buffer_mixes_examples_and_repeats_with_the_seed(wordpiece, lee_documents_path):
    """The same examples in another order; the same order for the same seed; document order without a buffer."""
    packer = SegmentPacker(64, wordpiece.cls_id, wordpiece.sep_id, wordpiece.pad_id, style="roberta")
    masker = MaskedLMMasker.for_tokenizer(wordpiece, max_predictions=10)
    documents = text_line_documents(lee_documents_path, one_document_per_line=True)

    def lengths(shuffle_buffer, seed=0):
        ds = pretraining_dataset(documents, wordpiece, objective="doc_sentences", packer=packer, masker=masker,
                                 batch_size=1, seed=seed, shuffle_buffer=shuffle_buffer)
        return [int(batch["padding_mask"].sum()) for batch in ds.as_numpy_iterator()]

    in_order, shuffled = lengths(0), lengths(200)
    assert sorted(in_order) == sorted(shuffled) and in_order != shuffled
    assert lengths(200) == shuffled and lengths(200, seed=1) != shuffled


def test_repeated_nsp_draws_other_documents_from_one_pass(wordpiece, tmp_path):
    """`repeat=True` on a two-document corpus: endless NSP examples, with the random-document buffer filled
    from one pass of the documents, not with 10,000 tokenized copies of them as over a repeated stream."""
    path = tmp_path / "two_documents.txt"
    path.write_text("The cat sat on the mat.\nIt was warm there.\n\nDogs bark at night.\nThe moon rose late.\n",
                    encoding="utf-8")
    tokenized_documents = []

    def counting_tokenizer(sentences):
        def note(texts):
            tokenized_documents.append(len(texts))
            return texts

        passed = tf.py_function(note, [sentences], tf.string)
        passed.set_shape(sentences.shape)
        return wordpiece(passed)

    packer = SegmentPacker(32, wordpiece.cls_id, wordpiece.sep_id, wordpiece.pad_id, style="bert")
    masker = MaskedLMMasker.for_tokenizer(wordpiece, max_predictions=4)
    ds = pretraining_dataset(text_line_documents(str(path)), counting_tokenizer, objective="nsp", packer=packer,
                             masker=masker, batch_size=4, seed=0, other_document_buffer=10_000, repeat=True)
    batches = list(ds.take(8).as_numpy_iterator())
    assert len(batches) == 8, "more examples than one pass holds"
    assert len(tokenized_documents) < 1_000, f"{len(tokenized_documents)} documents tokenized for 8 batches"
    labels = np.concatenate([batch["next_sentence_labels"] for batch in batches])
    assert set(labels) == {0, 1}
