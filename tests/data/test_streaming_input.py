"""Streaming pretraining input: long documents in windows, line-by-line examples, the tf.data service."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfbert import architectures
from tfbert.data.masking import MaskedLMMasker
from tfbert.data.packing import SegmentPacker
from tfbert.data.pretraining import line_by_line_dataset, pair_examples, pretraining_dataset, tokenize_documents
from tfbert.data.readers import text_line_documents, text_lines
from tfbert.training.pretraining_inputs import check_line_by_line_objectives

pytestmark = pytest.mark.end_to_end

SEQUENCE_LENGTH = 32


@pytest.fixture(scope="module")
def korean_lines(assets) -> list[str]:
    """The non-blank lines of the Korean constitution (konlpy): a sentence-a-line text without documents."""
    text = open(assets("text/ko/constitution.txt"), encoding="utf-8").read()
    return [line.strip() for line in text.splitlines() if line.strip()]


def restored_rows(batches: tf.data.Dataset) -> list[tuple[int, ...]]:
    """Each example's unmasked token ids (masked positions given back their `masked_ids`), without padding."""
    rows = []
    for batch in batches.as_numpy_iterator():
        ids = batch["token_ids"].copy()
        for row, positions, originals, weights in zip(ids, batch["masked_positions"], batch["masked_ids"],
                                                      batch["masked_weights"]):
            row[positions[weights > 0]] = originals[weights > 0]
        rows += [tuple(row[mask > 0]) for row, mask in zip(ids, batch["padding_mask"])]
    return rows


def test_a_document_without_breaks_streams_in_windows_whatever_its_length(tmp_path, korean_lines):
    # One document, repeated: the windows are the same size and hold the text in order, whatever the length.
    for copies in (1, 4):
        path = tmp_path / f"ko{copies}.txt"
        path.write_text("\n".join(korean_lines * copies) + "\n", encoding="utf-8")
        windows = [[s.decode() for s in window] for window in text_line_documents(path, max_document_sentences=64)
                   .as_numpy_iterator()]
        total = len(korean_lines) * copies
        assert [len(window) for window in windows] == [64] * (total // 64) + ([total % 64] if total % 64 else [])
        assert sum(windows, []) == korean_lines * copies


def test_documents_shorter_than_a_window_are_examples_as_unstreamed(tmp_path, wordpiece, korean_lines):
    # A file of short documents gives exactly the SOP pairs of the same documents held in memory.
    documents = [korean_lines[start:start + 20] for start in range(0, 200, 20)]
    path = tmp_path / "docs.txt"
    path.write_text("\n\n".join("\n".join(document) for document in documents) + "\n", encoding="utf-8")
    in_memory = tf.data.Dataset.from_generator(lambda: iter(documents),
                                               output_signature=tf.TensorSpec([None], tf.string))

    def pairs(source):
        tokenized = tokenize_documents(source, wordpiece, SEQUENCE_LENGTH - 3)
        return [(tuple(p["first"]), tuple(p["second"]), int(p["label"])) for p in
                pair_examples(tokenized, objective="sop", max_num_tokens=SEQUENCE_LENGTH - 3, seed=5)
                .as_numpy_iterator()]

    assert pairs(text_line_documents(path)) == pairs(in_memory)


def test_sentence_pairs_of_a_windowed_long_document_stay_inside_a_window(tmp_path, wordpiece, korean_lines):
    path = tmp_path / "long.txt"
    path.write_text("\n".join(korean_lines * 2) + "\n", encoding="utf-8")
    windows = text_line_documents(path, max_document_sentences=50)
    tokenized = tokenize_documents(windows, wordpiece, SEQUENCE_LENGTH - 3)
    window_texts = [" " + " ".join(map(str, window.flat_values.numpy())) + " " for window in tokenized]
    pairs = list(pair_examples(tokenized, objective="sop", max_num_tokens=SEQUENCE_LENGTH - 3, seed=1)
                 .as_numpy_iterator())
    assert len(pairs) > len(window_texts)
    for pair in pairs:
        first, second = (pair["second"], pair["first"]) if pair["label"] else (pair["first"], pair["second"])
        joined = " " + " ".join(map(str, np.concatenate([first, second]))) + " "
        assert any(joined in text for text in window_texts)


def test_line_by_line_makes_one_truncated_example_per_line(tmp_path, wordpiece, korean_lines):
    lines = korean_lines[:12]
    path = tmp_path / "lines.txt"
    path.write_text("\n\n".join(lines) + "\n   \n", encoding="utf-8")
    packer = SegmentPacker(SEQUENCE_LENGTH, wordpiece.cls_id, wordpiece.sep_id, wordpiece.pad_id, style="bert")
    masker = MaskedLMMasker.for_tokenizer(wordpiece, max_predictions=5)
    batches = line_by_line_dataset(text_lines(path), wordpiece, packer=packer, masker=masker, batch_size=4, seed=0)
    expected = [(wordpiece.cls_id, *wordpiece(tf.constant([line])).flat_values.numpy()[:SEQUENCE_LENGTH - 2],
                 wordpiece.sep_id) for line in lines]
    assert restored_rows(batches) == expected
    assert max(map(len, expected)) == SEQUENCE_LENGTH   # some lines were cut


def test_line_by_line_refuses_sentence_pair_objectives():
    check_line_by_line_objectives(architectures.get("bert"), ("mlm",))
    with pytest.raises(ValueError, match="--objectives mlm"):
        check_line_by_line_objectives(architectures.get("albert"), ("mlm", "sop"))


def test_data_service_with_two_workers_gives_every_example_once(tmp_path, wordpiece, korean_lines):
    from tfbert.data.service import distributed, start_dispatcher, start_worker

    for part in range(4):   # dynamic sharding shares files out: several per worker
        documents = [korean_lines[start:start + 10] for start in range(part * 40, part * 40 + 40, 10)]
        (tmp_path / f"part-{part}.txt").write_text(
            "\n\n".join("\n".join(document) for document in documents) + "\n", encoding="utf-8")
    packer = SegmentPacker(SEQUENCE_LENGTH, wordpiece.cls_id, wordpiece.sep_id, wordpiece.pad_id, style="bert")
    masker = MaskedLMMasker.for_tokenizer(wordpiece, max_predictions=5)

    def examples():
        return pretraining_dataset(text_line_documents(str(tmp_path / "part-*.txt")), wordpiece,
                                   objective="doc_sentences", packer=packer, masker=masker, batch_size=1, seed=0)

    dispatcher = start_dispatcher(0)
    workers = [start_worker(dispatcher.target, 0) for _ in range(2)]
    served = restored_rows(distributed(examples(), dispatcher.target, job_name="test"))
    local = restored_rows(examples())
    assert len(local) > 20
    assert sorted(served) == sorted(local)   # each example once, none lost
    for server in (*workers, dispatcher):
        server.stop()


def test_pretrain_command_trains_on_examples_from_a_data_service(tmp_path, assets, korean_lines, capsys):
    """`tfbert pretrain --data-service` end to end: a dispatcher and two workers in this process feed two steps."""
    from tfbert.cli import main
    from tfbert.data.service import start_dispatcher, start_worker

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join("\n".join(korean_lines[start:start + 8]) for start in range(0, 160, 8)) + "\n",
                      encoding="utf-8")
    config = tmp_path / "tiny.yaml"
    config.write_text("architecture: bert\nencoder:\n  vocab_size: 30522\n  hidden_size: 16\n  num_layers: 1\n"
                      "  num_heads: 2\n  intermediate_size: 32\n  max_positions: 32\n", encoding="utf-8")
    dispatcher = start_dispatcher(0)
    workers = [start_worker(dispatcher.target, 0) for _ in range(2)]
    try:
        assert main(["pretrain", "--config", str(config), "--tokenizer", str(assets("minilm/vocab.txt").parent),
                     "--data", str(corpus), "--model-dir", str(tmp_path / "run"), "--steps", "2", "--batch-size", "2",
                     "--sequence-length", str(SEQUENCE_LENGTH), "--max-predictions", "4", "--checkpoint-every", "2",
                     "--strategy", "cpu", "--data-service", dispatcher.target]) == 0
    finally:
        for server in (*workers, dispatcher):
            server.stop()
    assert "trained to step 2 of 2" in capsys.readouterr().out
    assert (tmp_path / "run" / "encoder" / "encoder.keras").is_file()
