"""`tfbert predict` (tfbert.commands.predict) on the shared exports: every task, every input route, bad input."""

import io
import json
import sys

import numpy as np
import pytest
import tensorflow as tf
from conftest import CHOICES, CONTEXTS, LABELS, MASKED, PAIRS, QUESTIONS, TAGS, TEXTS

from tfbert.cli import main
from tfbert.export.client import SavedModelClient, predict_texts

pytestmark = pytest.mark.end_to_end


def _run(capsys, *argv, stdin=None, monkeypatch=None):
    """`(exit status, stdout, stderr)` of `tfbert predict ARGV`."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", stdin)
    status = main(["predict", *map(str, argv)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def test_fill_mask_matches_the_signature_and_prints_top_k(exports, loaded, capsys):
    texts = ["the [MASK] sat on the [MASK].", MASKED[0]]
    records = predict_texts(exports["fill_mask"], texts, top_k=3)
    served = loaded["fill_mask"].signatures["serving_default"](text=tf.constant(texts))
    assert [record["task"] for record in records] == ["fill_mask", "fill_mask"]
    assert [len(record["masks"]) for record in records] == [2, 1]
    for row, record in enumerate(records):
        for slot, mask in enumerate(record["masks"]):
            assert mask["position"] == served["mask_positions"][row, slot].numpy()
            assert [p["token"] for p in mask["predictions"]] == \
                [token.decode() for token in served["tokens"][row, slot, :3].numpy()]
            scores = [p["score"] for p in mask["predictions"]]
            assert scores == sorted(scores, reverse=True) and 0 < scores[-1] <= scores[0] < 1

    status, out, err = _run(capsys, exports["fill_mask"], *texts, "--top-k", "2")
    assert status == 0 and not err
    lines = out.splitlines()
    assert lines[0] == texts[0] and lines[1].startswith("  mask 1: ") and lines[2].startswith("  mask 2: ")
    first = records[0]["masks"][0]["predictions"]
    assert lines[1] == "  mask 1: " + "  ".join(f"{p['token']} {p['score']:.4f}" for p in first[:2])
    assert lines[3] == texts[1] and lines[4].startswith("  mask 1: ") and len(lines) == 5


def test_fill_mask_json_and_a_top_k_above_the_exports(exports, capsys):
    status, out, err = _run(capsys, exports["fill_mask"], "--json", MASKED[0], "--top-k", "9")
    assert status == 0 and "this export returns 5 tokens per mask; export with --top-k 9" in err
    (record,) = _json_lines(out)
    assert record["text"] == MASKED[0] and len(record["masks"][0]["predictions"]) == 5


def test_classification_pairs_from_tabs_or_text_pair(exports, loaded, capsys):
    served = loaded["classification"].signatures["serving_default"](text=tf.constant(TEXTS[:2]),
                                                                    text_pair=tf.constant(PAIRS[:2]))
    status, out, _ = _run(capsys, exports["classification"], "--json", *[f"{t}\t{p}" for t, p in zip(TEXTS, PAIRS)][:2])
    assert status == 0
    records = _json_lines(out)
    assert [(r["text"], r["text_pair"]) for r in records] == list(zip(TEXTS[:2], PAIRS[:2]))
    for row, record in enumerate(records):
        assert record["label"] == served["label"][row].numpy().decode() and record["label"] in LABELS
        assert list(record["probabilities"]) == LABELS
        np.testing.assert_allclose(list(record["probabilities"].values()), served["probabilities"][row], atol=1e-6)

    status, out, _ = _run(capsys, exports["classification"], "--text-pair", PAIRS[0], TEXTS[0])
    assert status == 0
    assert out.splitlines()[0] == f"{TEXTS[0]}  |  {PAIRS[0]}"
    assert out.splitlines()[1].startswith(f"  {records[0]['label']}  (entailment ")


def test_embeddings_from_a_file_to_npy_jsonl_and_the_screen(exports, loaded, tmp_path, capsys):
    texts_file = tmp_path / "texts.txt"
    texts_file.write_text(f"{TEXTS[0]}\n\n{TEXTS[2]}\n   \n{TEXTS[3]}\n", encoding="utf-8")
    expected = loaded["embedding"].signatures["serving_default"](
        text=tf.constant([TEXTS[0], TEXTS[2], TEXTS[3]]))["embedding"].numpy()

    status, out, _ = _run(capsys, exports["embedding"], "--file", texts_file, "--output", tmp_path / "out" / "v.npy",
                          "--batch-size", "2")
    assert status == 0 and out.strip().endswith(f"3 embeddings of {expected.shape[1]} values")
    np.testing.assert_allclose(np.load(tmp_path / "out" / "v.npy"), expected, atol=1e-5)

    status, out, _ = _run(capsys, exports["embedding"], "--file", texts_file, "--output", tmp_path / "v.jsonl")
    records = _json_lines((tmp_path / "v.jsonl").read_text(encoding="utf-8"))
    assert [r["text"] for r in records] == [TEXTS[0], TEXTS[2], TEXTS[3]]
    np.testing.assert_allclose([r["embedding"] for r in records], expected, atol=1e-5)

    status, out, _ = _run(capsys, exports["embedding"], TEXTS[1])
    lines = out.splitlines()
    assert lines[0] == TEXTS[1] and lines[1].startswith(f"  embedding of {expected.shape[1]} values: [")
    assert lines[1].endswith(", ...]") and lines[1].count(",") == 6


def test_stdin_when_piped_or_named_with_a_dash(exports, capsys, monkeypatch):
    status, out, _ = _run(capsys, exports["regression"], "--json", stdin=io.StringIO("a film\n\nanother film\n"),
                          monkeypatch=monkeypatch)
    assert status == 0 and [r["text"] for r in _json_lines(out)] == ["a film", "another film"]
    status, out, _ = _run(capsys, exports["regression"], "first", "-", "--json", stdin=io.StringIO("from stdin\n"),
                          monkeypatch=monkeypatch)
    records = _json_lines(out)
    assert [r["text"] for r in records] == ["first", "from stdin"]
    assert all(isinstance(r["score"], float) and r["task"] == "regression" for r in records)


def test_tagging_question_answering_and_the_tokenize_signature(exports, loaded, capsys):
    (tagged,) = predict_texts(exports["tagging"], [TEXTS[0]])
    assert tagged["tokens"][0]["text"] == "Ada" and {t["tag"] for t in tagged["tokens"]} <= set(TAGS)
    assert "".join(t["text"] for t in tagged["tokens"]) == TEXTS[0].replace(" ", "")

    served = loaded["question_answering"].signatures["serving_default"](question=tf.constant(QUESTIONS[:1]),
                                                                        context=tf.constant(CONTEXTS[:1]))
    status, out, _ = _run(capsys, exports["question_answering"], "--question", QUESTIONS[0], "--json", CONTEXTS[0])
    (record,) = _json_lines(out)
    assert status == 0 and record["question"] == QUESTIONS[0] and record["context"] == CONTEXTS[0]
    assert record["answer"] == served["answer"][0].numpy().decode()
    assert CONTEXTS[0][record["start"]:record["end"]] == record["answer"]
    (same,) = predict_texts(exports["question_answering"], [(QUESTIONS[0], CONTEXTS[0])])
    assert same == record

    (tokens,) = predict_texts(exports["fill_mask"], ["hello world"], signature="tokenize")
    assert tokens["task"] == "tokenize" and len(tokens["token_ids"]) == 2


def test_multiple_choice_sends_context_and_choices(exports, loaded, capsys):
    served = loaded["multiple_choice"].signatures["serving_default"](
        context=tf.constant(QUESTIONS[:2]), choices=tf.constant(CHOICES[:2]))
    status, out, _ = _run(capsys, exports["multiple_choice"], "--json",
                          *["\t".join([question, *choices]) for question, choices in zip(QUESTIONS[:2], CHOICES[:2])])
    records = _json_lines(out)
    assert status == 0 and [record["choices"] for record in records] == CHOICES[:2]
    for row, record in enumerate(records):
        assert record["choice_id"] == served["choice_id"][row] and record["choice"] == CHOICES[row][record["choice_id"]]
        np.testing.assert_allclose(record["probabilities"], served["probabilities"][row], atol=1e-6)
    # a different number of choices per example goes in separate requests
    two = predict_texts(exports["multiple_choice"], [(QUESTIONS[0], CHOICES[0]), (QUESTIONS[1], CHOICES[1][:2])])
    assert [len(record["probabilities"]) for record in two] == [3, 2] and two[0] == records[0]
    status, out, _ = _run(capsys, exports["multiple_choice"], "\t".join([QUESTIONS[0], *CHOICES[0]]))
    lines = out.splitlines()
    assert lines[0] == f"C: {QUESTIONS[0]}" and len(lines) == 4
    assert lines[1 + records[0]["choice_id"]].startswith("  * ")


def test_a_model_folder_runs_its_highest_version(exports):
    root = exports["regression"].parent
    assert predict_texts(root, ["x"]) == predict_texts(exports["regression"], ["x"])


@pytest.fixture(scope="module")
def plain_saved_model(tmp_path_factory):
    """A SavedModel that is not a tfbert export: float in, float out."""
    module = tf.Module()
    module.double = tf.function(lambda x: {"y": 2.0 * x}, input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
    path = tmp_path_factory.mktemp("plain") / "1"
    tf.saved_model.save(module, str(path), signatures={"serving_default": module.double.get_concrete_function()})
    return path


@pytest.mark.parametrize("argv, message", [
    (["{missing}", "x"], "SavedModel folder '{missing}' does not exist"),
    (["{empty}", "x"], "is not a SavedModel (no saved_model.pb"),
    (["{plain}", "x"], "has no tfbert serving signature (its serving_default takes x (float32) and returns y)"),
    (["{fill_mask}", "--file", "{missing}"], "--file '{missing}' does not exist"),
    (["{fill_mask}", "--file", "{blank}"], "holds no text: give texts as arguments, --file PATH"),
    (["{fill_mask}"], "no input text: give texts as arguments, --file PATH (one text a line), or pipe them"),
    (["{fill_mask}", "paris is the capital of france."],
     "text 1 ('paris is the capital of france.') has no mask token: write [MASK] where the model should fill in"),
    (["{fill_mask}", "x", "--signature", "encode"], "signature 'encode' takes input_mask (int32)"),
    (["{fill_mask}", "x", "--signature", "nope"],
     "has no signature 'nope'; it has encode, preprocess, serving_default"),
    (["{classification}", "a"], "this classification model takes text and text_pair; give each example as "
                                "TEXT<TAB>TEXT_PAIR, or pass --text-pair"),
    (["{classification}", "a", "--question", "b"], "--question is for question answering models"),
    (["{classification}", "a\tb", "--output", "{tmp}/x.npy"], ".npy is for embeddings; this is a classification"),
    (["{embedding}", "a", "--output", "{tmp}/x.csv"], "use a .npy file (embeddings) or a .jsonl file"),
    (["{question_answering}", "a context"], "QUESTION<TAB>CONTEXT, or pass --question"),
    (["{regression}", "a", "--text-pair", "b"], "--text-pair is for models exported with --pair"),
    (["{multiple_choice}", "a context\tone choice"], "takes a context and two or more choices; give each example "
                                                      "as CONTEXT<TAB>CHOICE<TAB>CHOICE..."),
    (["{regression}", "a", "--language", "en"], "--language 'en': this regression model takes no language"),
])
def test_bad_input_exits_2_with_one_line(argv, message, exports, plain_saved_model, tmp_path, capsys, monkeypatch):
    (tmp_path / "empty").mkdir()
    (tmp_path / "blank.txt").write_text("\n  \n\n")
    names = {"missing": tmp_path / "missing", "empty": tmp_path / "empty", "plain": plain_saved_model,
             "blank": tmp_path / "blank.txt", "tmp": tmp_path, **exports}
    argv = [arg.format(**names) for arg in argv]
    status, out, err = _run(capsys, *argv, stdin=io.StringIO(""), monkeypatch=monkeypatch)
    assert status == 2 and not out
    assert err.startswith("tfbert predict: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert message.format(**names) in err


def test_the_mask_token_named_is_the_tokenizers(exports):
    predictor = SavedModelClient(exports["fill_mask"])
    assert predictor.task == "fill_mask" and predictor.mask_token == "[MASK]" and predictor.top_k_available == 5
    predictor.mask_token = "<mask>"  # as a RoBERTa or XLM-R export's tokenizer names it
    with pytest.raises(ValueError, match="text 2 .* write <mask> where"):
        predictor.examples(["a <mask> b", "a [MASK] b"])


def test_predict_keeps_nul_and_control_characters_and_their_offsets(exports):
    (tagged,) = predict_texts(exports["tagging"], ["lord\x01said a\x00b"])
    assert [(token["token"], token["text"]) for token in tagged["tokens"]] == [
        ("lords", "lord\x01s"), ("##aid", "aid"), ("ab", "a\x00b")]


def test_predict_output_is_refused_when_it_exists_replaced_whole_with_overwrite_and_named_when_the_disk_stops_it(
        exports, tmp_path, capsys):
    # --output replaced an existing file, and a full disk left a cut-off file, naming none.
    import resource

    out = tmp_path / "vectors.npy"
    out.write_bytes(b"mine")
    argv = (exports["embedding"], TEXTS[0], TEXTS[1], "--output", out)
    status, _, err = _run(capsys, *argv)
    assert status == 2 and out.read_bytes() == b"mine"
    assert err.strip() == (f"tfbert predict: error: --output {out} already exists (a file); nothing was changed: give "
                           "another --output, or add --overwrite to replace it")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, hard))   # as `ulimit -f`: a write past 100 bytes fails
    try:
        status, _, err = _run(capsys, *argv, "--overwrite")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert status == 2 and "\n" not in err.strip()
    assert err.startswith(f"tfbert predict: error: cannot write {out}: the file is larger than the file-size limit")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["vectors.npy"] and out.read_bytes() == b"mine"
    status, out_text, _ = _run(capsys, *argv, "--overwrite")
    assert status == 0 and out_text.startswith(f"wrote {out}: 2 embeddings")
    assert np.load(out).shape[0] == 2 and sorted(path.name for path in tmp_path.iterdir()) == ["vectors.npy"]
