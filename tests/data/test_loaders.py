"""GLUE and SQuAD loaders over TFDS (tfds.load replaced by in-memory datasets) and local files."""

import json

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from tfbert.data.local_files import DataFileError
from tfbert.data.squad_examples import load_squad, read_squad_json, read_squad_jsonl
from tfbert.data.text_examples import GLUE_TASKS, load_glue, read_text_examples


@pytest.fixture
def fake_tfds(monkeypatch):
    """Replace `tfds.load` by datasets with the features of the real builders; records the calls."""
    calls = []
    datasets = {}

    def load(name, split, data_dir=None, download=True):
        calls.append((name, split, download))
        return datasets[name]()

    monkeypatch.setattr(tfds, "load", load)
    return datasets, calls


def test_load_glue_pairs_and_regression(fake_tfds):
    datasets, calls = fake_tfds
    datasets["glue/mrpc"] = lambda: tf.data.Dataset.from_tensor_slices({
        "sentence1": [b"He left.", "Zoë sang.".encode()], "sentence2": [b"He went.", b"Nobody sang."],
        "label": np.array([1, 0], np.int64), "idx": np.array([0, 1], np.int32)})
    datasets["glue/stsb"] = lambda: tf.data.Dataset.from_tensor_slices({
        "sentence1": [b"a", b"b"], "sentence2": [b"c", b"d"], "label": np.array([4.5, 0.25], np.float32),
        "idx": np.array([0, 1], np.int32)})
    mrpc = load_glue("mrpc", "validation")
    assert mrpc.texts == ["He left.", "Zoë sang."] and mrpc.pair_texts == ["He went.", "Nobody sang."]
    assert mrpc.labels.tolist() == [1, 0] and mrpc.labels.dtype == np.int32
    stsb = load_glue("stsb", "train", download=False)
    assert stsb.labels.dtype == np.float32 and stsb.labels.tolist() == [4.5, 0.25]
    assert calls == [("glue/mrpc", "validation", True), ("glue/stsb", "train", False)]
    assert GLUE_TASKS["stsb"].is_regression and GLUE_TASKS["mnli"].validation_split == "validation_matched"
    with pytest.raises(ValueError, match="unknown GLUE task 'sst'"):
        load_glue("sst", "train")


def test_load_squad_v2_with_variable_numbers_of_answers(fake_tfds):
    datasets, _ = fake_tfds
    records = [
        {"id": "a", "title": "T", "context": "Paris is in France.", "question": "Where is Paris?",
         "answers": {"text": ["France", "in France"], "answer_start": [12, 9]}, "is_impossible": False,
         "plausible_answers": {"text": [], "answer_start": []}},
        {"id": "b", "title": "T", "context": "Paris is in France.", "question": "Where is Rome?",
         "answers": {"text": [], "answer_start": []}, "is_impossible": True,
         "plausible_answers": {"text": ["France"], "answer_start": [12]}},
    ]
    answers_spec = {"text": tf.TensorSpec([None], tf.string), "answer_start": tf.TensorSpec([None], tf.int32)}
    signature = {"id": tf.TensorSpec([], tf.string), "title": tf.TensorSpec([], tf.string),
                 "context": tf.TensorSpec([], tf.string), "question": tf.TensorSpec([], tf.string),
                 "answers": answers_spec, "plausible_answers": answers_spec, "is_impossible": tf.TensorSpec([], tf.bool)}
    datasets["squad/v2.0"] = lambda: tf.data.Dataset.from_generator(lambda: iter(records), output_signature=signature)
    examples = load_squad("v2.0", "validation")
    assert [e.id for e in examples] == ["a", "b"]
    assert examples[0].answers == ["France", "in France"] and examples[0].answer_starts == [12, 9]
    assert examples[1].is_impossible and examples[1].answers == []
    with pytest.raises(ValueError, match="unknown SQuAD version"):
        load_squad("v3", "train")


def test_read_text_examples_csv_tsv_jsonl(tmp_path):
    (tmp_path / "a.csv").write_text('sentence1,sentence2,label\n"Hi, you",there,1\nx,y,0\n', encoding="utf-8")
    (tmp_path / "b.tsv").write_text('sentence\tlabel\nit\'s "great\tpositive\n\nbad\tnegative\n', encoding="utf-8")
    (tmp_path / "c.jsonl").write_text('{"sentence1": "a", "sentence2": "b", "label": 3.5}\n', encoding="utf-8")
    pairs = read_text_examples(tmp_path / "a.csv", ("sentence1", "sentence2"))
    assert pairs.texts == ["Hi, you", "x"] and pairs.pair_texts == ["there", "y"] and pairs.labels.tolist() == [1, 0]
    named = read_text_examples(tmp_path / "b.tsv", label_names=["negative", "positive"])
    assert named.texts == ["it's \"great", "bad"] and named.labels.tolist() == [1, 0] and named.pair_texts is None
    scores = read_text_examples(tmp_path / "c.jsonl", ("sentence1", "sentence2"), regression=True)
    assert scores.labels.tolist() == [3.5]


@pytest.mark.parametrize("name, content, kwargs, message", [
    ("a.csv", "sentence,score\nx,1\n", {}, r"a\.csv, line 1, column 'label': missing column in the header \(columns: sentence, score\)"),
    ("a.tsv", "sentence\tlabel\nx\t1\ny\n", {}, r"a\.tsv, line 3: expected 2 fields like the header, got 1"),
    ("a.csv", "sentence,label\nx,1\ny,maybe\n", {}, r"a\.csv, line 3, column 'label': 'maybe' is not an integer class id"),
    ("a.jsonl", '{"sentence": "x", "label": 1}\n{"sentence": "y"}\n', {}, r"a\.jsonl, line 2, column 'label': missing column"),
    ("a.jsonl", '{"sentence": "x", "label": 1}\n\n{"sentence": "y", \n', {}, r"a\.jsonl, line 3: not valid JSON"),
    ("a.jsonl", '{"sentence": 5, "label": 1}\n', {}, r"a\.jsonl, line 1, column 'sentence': expected text, got int"),
    ("a.jsonl", '{"sentence": "x", "label": "high"}\n', {"regression": True}, r"line 1, column 'label': 'high' is not a number"),
    ("a.txt", "x", {}, r"a\.txt: cannot tell the format from the extension '\.txt'"),
    ("a.csv", "", {}, r"a\.csv, line 1: the file is empty"),
])
def test_bad_local_files_name_the_file_line_and_column(tmp_path, name, content, kwargs, message):
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(DataFileError, match=message):
        read_text_examples(tmp_path / name, **kwargs)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="nowhere.csv: no such data file"):
        read_text_examples("nowhere.csv")


def test_squad_json_and_jsonl_with_bad_answer_offsets(tmp_path):
    context = "Zoë lives in Zürich."
    official = {"data": [{"title": "Z", "paragraphs": [{"context": context, "qas": [
        {"id": "q1", "question": "Where?", "answers": [{"text": "Zürich", "answer_start": 13}]},
        {"id": "q2", "question": "When?", "answers": [], "is_impossible": True}]}]}]}
    (tmp_path / "dev.json").write_text(json.dumps(official, ensure_ascii=False), encoding="utf-8")
    examples = read_squad_json(tmp_path / "dev.json")
    assert [(e.id, e.answers, e.answer_starts, e.is_impossible) for e in examples] == [
        ("q1", ["Zürich"], [13], False), ("q2", [], [], True)]

    good = {"id": "q1", "question": "Where?", "context": context, "answers": {"text": ["Zürich"], "answer_start": [13]}}
    bad = {**good, "id": "q9", "answers": {"text": ["Zürich"], "answer_start": [12]}}
    (tmp_path / "dev.jsonl").write_text("\n".join(json.dumps(r) for r in (good, bad)), encoding="utf-8")
    with pytest.raises(DataFileError, match=r"dev\.jsonl, line 2, column 'answers': answer 'Zürich' is not at "
                                            r"character 12 of the context of question 'q9'"):
        read_squad_jsonl(tmp_path / "dev.jsonl")
    (tmp_path / "short.jsonl").write_text(json.dumps({"id": "x", "question": "q", "answers": {}}), encoding="utf-8")
    with pytest.raises(DataFileError, match=r"short\.jsonl, line 1, column 'context': missing column"):
        read_squad_jsonl(tmp_path / "short.jsonl")
