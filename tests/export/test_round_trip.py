"""Every signature, loaded in a process that imports only tensorflow and tensorflow_text, gives the
in-memory model's outputs (inputs built independently with the NumPy task features)."""

import re

import numpy as np
import pytest
import tensorflow as tf
from conftest import (CHOICES, CONTEXTS, LABELS, MASKED, PAIRS, QUESTIONS, SEQUENCE_LENGTH, TAGS, TEXTS, run_in_fresh_process,
                      strings)

from tfbert.tasks import (QAExample, TensorFlowTokenizer, decode_answers, encode_choices, encode_texts,
                          make_features)
from tfbert.finetuning.features import pad_rows

pytestmark = pytest.mark.end_to_end

TOLERANCE = 1e-5
LONG_QUESTIONS = ["When did the museum open?", "Who painted the ceiling?"]
LONG_CONTEXTS = [" ".join(f"Room {n} holds paintings from the {n}th century and a café." for n in range(1, 12))
                 + " The museum opened in 1902.",
                 "The hall is long. " * 15 + "Michelangelo painted the ceiling of the chapel in Rome."]


@pytest.fixture(scope="module")
def pieces(tokenizer):
    return TensorFlowTokenizer(tokenizer, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)


@pytest.fixture(scope="module")
def hub_pair(models, tokenizer, tmp_path_factory):
    from tfbert.export import export_hub_pair

    return export_hub_pair(models["classification"].encoder, "tiny", tokenizer=tokenizer,
                           output_dir=tmp_path_factory.mktemp("hub"), sequence_length=SEQUENCE_LENGTH, pair=True)


@pytest.fixture(scope="module")
def hub_inputs(pieces):
    features = encode_texts(pieces, TEXTS, PAIRS, SEQUENCE_LENGTH)
    return {"input_word_ids": features["token_ids"], "input_mask": features["padding_mask"],
            "input_type_ids": features["segment_ids"]}


@pytest.fixture(scope="module")
def served(exports, hub_pair, hub_inputs, tmp_path_factory):
    """All requests in one fresh process (each process start costs seconds)."""
    text, pair = strings(TEXTS), strings(PAIRS)
    requests = [
        ("classification", exports["classification"], "serving_default", {"text": text, "text_pair": pair}),
        ("preprocess", exports["classification"], "preprocess", {"text": text, "text_pair": pair}),
        ("tokenize", exports["classification"], "tokenize", {"text": text}),
        ("regression", exports["regression"], "serving_default", {"text": text}),
        ("tagging", exports["tagging"], "serving_default", {"text": text}),
        ("qa", exports["question_answering"], "serving_default",
         {"question": strings(QUESTIONS + LONG_QUESTIONS), "context": strings(CONTEXTS + LONG_CONTEXTS)}),
        ("multiple_choice", exports["multiple_choice"], "serving_default",
         {"context": strings(QUESTIONS), "choices": np.array([strings(row) for row in CHOICES])}),
        ("embedding", exports["embedding"], "serving_default", {"text": text}),
        ("embedding_preprocess", exports["embedding"], "preprocess", {"text": text}),
        ("fill_mask", exports["fill_mask"], "serving_default", {"text": strings(MASKED)}),
        ("encode", exports["classification"], "encode", hub_inputs),
        ("hub_preprocess", hub_pair[0], "serving_default", {"text": text, "text_pair": pair}),
        ("hub_encoder", hub_pair[1], "serving_default", hub_inputs),
    ]
    return run_in_fresh_process(requests, tmp_path_factory.mktemp("fresh"))


def _close(actual, expected):
    np.testing.assert_allclose(actual, np.asarray(expected), atol=TOLERANCE, rtol=0)


def _run(model, features):
    return {name: np.asarray(value) for name, value in model(features, training=False).items()}


def test_preprocess_and_tokenize(served, pieces, tokenizer):
    expected = encode_texts(pieces, TEXTS, PAIRS, SEQUENCE_LENGTH)
    got = served["preprocess"]
    np.testing.assert_array_equal(got["input_word_ids"], expected["token_ids"])
    np.testing.assert_array_equal(got["input_type_ids"], expected["segment_ids"])
    np.testing.assert_array_equal(got["input_mask"], expected["padding_mask"])
    ids = tokenizer.tokenize(TEXTS)
    np.testing.assert_array_equal(served["tokenize"]["token_ids"], ids.to_tensor(tokenizer.pad_id).numpy())
    np.testing.assert_array_equal(served["tokenize"]["lengths"], ids.row_lengths().numpy())


def test_encode(served, models, pieces):
    expected = _run(models["classification"].encoder, encode_texts(pieces, TEXTS, PAIRS, SEQUENCE_LENGTH))
    _close(served["encode"]["sequence_output"], expected["sequence_output"])
    _close(served["encode"]["pooled_output"], expected["pooled_output"])


def test_classification(served, models, pieces):
    logits = _run(models["classification"], encode_texts(pieces, TEXTS, PAIRS, SEQUENCE_LENGTH))["logits"]
    got = served["classification"]
    _close(got["logits"], logits)
    _close(got["probabilities"], tf.nn.softmax(logits).numpy())
    assert got["label_id"].tolist() == logits.argmax(-1).tolist()
    assert [label.decode() for label in got["label"]] == [LABELS[i] for i in logits.argmax(-1)]


def test_regression_and_embedding(served, models, pieces):
    features = encode_texts(pieces, TEXTS, None, SEQUENCE_LENGTH)
    np.testing.assert_array_equal(served["embedding_preprocess"]["input_word_ids"], features["token_ids"])
    _close(served["regression"]["score"], _run(models["regression"], features)["score"])
    _close(served["embedding"]["embedding"], _run(models["embedding"], features)["embedding"])


def test_tagging(served, models, pieces):
    encoded = pieces.encode_with_offsets(TEXTS)
    rows = [[pieces.cls_id, *p.ids, pieces.sep_id] for p in encoded]
    features = {"token_ids": pad_rows(rows, SEQUENCE_LENGTH), "segment_ids": pad_rows([[0]] * len(rows), SEQUENCE_LENGTH),
                "padding_mask": pad_rows([[1] * len(row) for row in rows], SEQUENCE_LENGTH)}
    logits = _run(models["tagging"], features)["logits"]
    got = served["tagging"]
    _close(got["logits"], logits)
    for row, p in enumerate(encoded):
        text_positions = slice(1, 1 + len(p))
        assert got["tag_ids"][row, text_positions].tolist() == logits[row, text_positions].argmax(-1).tolist()
        assert [t.decode() for t in got["tags"][row, text_positions]] == [TAGS[i] for i in logits[row, text_positions].argmax(-1)]
        assert got["start"][row, text_positions].tolist() == p.starts
        assert got["end"][row, text_positions].tolist() == p.ends
        assert (got["tag_ids"][row, 1 + len(p):] == -1).all() and got["tag_ids"][row, 0] == -1


def test_question_answering_over_strided_windows(served, models, pieces):
    """The graph's windows and answers are `make_features` + `decode_answers` (doc stride as exported)."""
    examples = [QAExample(str(i), q, c) for i, (q, c) in enumerate(zip(QUESTIONS + LONG_QUESTIONS,
                                                                        CONTEXTS + LONG_CONTEXTS))]
    features = make_features(pieces, examples, max_length=SEQUENCE_LENGTH, doc_stride=SEQUENCE_LENGTH // 3,
                             max_question_length=SEQUENCE_LENGTH // 2)
    windows = np.bincount(features.example_index)
    assert (windows[:len(QUESTIONS)] == 1).all() and (windows[len(QUESTIONS):] > 3).all()
    outputs = _run(models["question_answering"], features.inputs)
    answers = decode_answers(examples, features, outputs["start_logits"], outputs["end_logits"],
                             n_best=SEQUENCE_LENGTH, max_answer_length=30)
    got = served["qa"]
    for row, example in enumerate(examples):
        best = answers.n_best[example.id][0]
        assert got["answer"][row].decode() == best.text == example.context[got["start"][row]:got["end"][row]]
        assert (got["start"][row], got["end"][row]) == (best.start_char, best.end_char)
        assert abs(got["score"][row] - best.score) < TOLERANCE
    no_answer = outputs["start_logits"][:, 0] + outputs["end_logits"][:, 0]
    _close(got["no_answer_score"], [no_answer[features.example_index == row].min() for row in range(len(examples))])
    first_windows = [features.char_ends[np.flatnonzero(features.example_index == row)[0]].max()
                     for row in range(len(QUESTIONS), len(examples))]
    assert (got["start"][len(QUESTIONS):] >= first_windows).any(), "an answer past the first window is found"


def test_multiple_choice(served, models, pieces):
    logits = _run(models["multiple_choice"], encode_choices(pieces, QUESTIONS, CHOICES, SEQUENCE_LENGTH))["logits"]
    got = served["multiple_choice"]
    assert got["logits"].shape == (len(QUESTIONS), len(CHOICES[0]))
    _close(got["logits"], logits)
    _close(got["probabilities"], tf.nn.softmax(logits).numpy())
    np.testing.assert_array_equal(got["choice_id"], logits.argmax(-1))


def test_fill_mask(served, models, tokenizer):
    rows = []
    for text in MASKED:
        parts = re.sub(r"\s*\[MASK\]", "[MASK]", text).split("[MASK]")
        ids = []
        for index, part in enumerate(parts):
            ids += tokenizer.tokenize([part]).to_list()[0] + ([tokenizer.mask_id] if index < len(parts) - 1 else [])
        rows.append([tokenizer.cls_id, *ids, tokenizer.sep_id])
    token_ids = pad_rows(rows, SEQUENCE_LENGTH)
    positions = [[i for i, token in enumerate(row) if token == tokenizer.mask_id][:4] for row in rows]
    features = {"token_ids": token_ids, "segment_ids": np.zeros_like(token_ids),
                "padding_mask": pad_rows([[1] * len(row) for row in rows], SEQUENCE_LENGTH),
                "masked_positions": pad_rows(positions, 4)}
    probabilities = tf.nn.softmax(_run(models["fill_mask"], features)["mlm_logits"]).numpy()
    got = served["fill_mask"]
    for row, row_positions in enumerate(positions):
        assert got["mask_positions"][row].tolist() == row_positions + [-1] * (4 - len(row_positions))
        for slot in range(4):
            if slot < len(row_positions):
                top = np.argsort(-probabilities[row, slot], kind="stable")[:5]
                assert got["token_ids"][row, slot].tolist() == top.tolist()
                _close(got["scores"][row, slot], probabilities[row, slot, top])
                assert [t.decode() for t in got["tokens"][row, slot]] == [tokenizer.id_to_token(int(i)) for i in top]
            else:
                assert got["token_ids"][row, slot].tolist() == [-1] * 5 and not got["scores"][row, slot].any()


def test_hub_pair(served, hub_inputs):
    for name, expected in hub_inputs.items():
        np.testing.assert_array_equal(served["hub_preprocess"][name], expected)
    _close(served["hub_encoder"]["pooled_output"], served["encode"]["pooled_output"])
    _close(served["hub_encoder"]["sequence_output"], served["encode"]["sequence_output"])
