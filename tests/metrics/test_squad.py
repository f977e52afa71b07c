"""SQuAD exact match and F1 against the definitions of the official v1.1 and v2.0 scripts."""

import pytest

from tfbert.metrics import evaluate_squad, normalize_answer, squad_exact_match, squad_f1


@pytest.mark.parametrize("text, normalized", [
    ("The Denver Broncos!", "denver broncos"),
    ("  an   apple,a day ", "applea day"),            # punctuation goes before articles: "apple,a" -> "applea"
    ("Theory of the atom", "theory of atom"),         # "the" only as a whole word
    ("A.B.C.", "abc"),
    ("rock 'n' roll", "rock n roll"),
    ("Ça va — très bien", "ça va — très bien"),       # only ASCII punctuation is removed
])
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


def test_exact_match_takes_the_best_gold_answer():
    assert squad_exact_match("Broncos", ["Denver Broncos", "the Broncos"]) == 1.0
    assert squad_exact_match("Broncos", ["Denver Broncos"]) == 0.0


def test_f1_counts_shared_tokens_with_multiplicity():
    # prediction tokens: [new, york, new]; gold: [new, york, city] -> common 2, p 2/3, r 2/3.
    assert squad_f1("new York, new", ["New York City"]) == pytest.approx(2 / 3)
    # the max over golds: second gold matches exactly
    assert squad_f1("new York, new", ["New York City", "new new york"]) == pytest.approx(1.0)
    assert squad_f1("a the", ["Paris"], version="v1.1") == 0.0


def test_empty_answers_differ_between_v1_and_v2():
    # v2.0: empty prediction vs empty gold scores 1; vs a real gold scores 0 (F1 and EM).
    assert squad_f1("", [], version="v2.0") == 1.0
    assert squad_exact_match("", [], version="v2.0") == 1.0
    assert squad_f1("", ["Paris"], version="v2.0") == 0.0
    assert squad_f1("Paris", [], version="v2.0") == 0.0
    # gold answers normalising to nothing count as no answer in v2.0
    assert squad_f1("", ["the"], version="v2.0") == 1.0
    assert squad_f1("the", ["the"], version="v1.1") == 0.0  # no shared token left after normalisation
    assert squad_exact_match("the", ["the"], version="v1.1") == 1.0
    with pytest.raises(ValueError, match="at least one gold"):
        squad_f1("x", [], version="v1.1")


def test_evaluate_v1_counts_unanswered_questions_as_zero():
    golds = {"q1": ["Denver Broncos"], "q2": ["Santa Clara, California"], "q3": ["gold"]}
    predictions = {"q1": "the Denver Broncos", "q2": "Santa Clara"}
    scores = evaluate_squad(golds, predictions, version="v1.1")
    assert scores["total"] == 3
    assert scores["exact"] == pytest.approx(100 / 3)
    f1_q2 = 2 * (1.0 * (2 / 3)) / (1.0 + 2 / 3)
    assert scores["f1"] == pytest.approx(100 * (1 + f1_q2) / 3)


def test_evaluate_v2_splits_has_and_no_answer_and_applies_the_threshold():
    golds = {"a": ["Paris"], "b": [], "c": ["1912"], "d": []}
    predictions = {"a": "Paris", "b": "", "c": "in 1912", "d": "something"}
    scores = evaluate_squad(golds, predictions, version="v2.0")
    assert scores["total"] == 4
    assert scores["HasAns_total"] == 2 and scores["NoAns_total"] == 2
    assert scores["exact"] == pytest.approx(50.0)
    assert scores["HasAns_f1"] == pytest.approx(100 * (1 + 2 / 3) / 2)
    assert scores["NoAns_exact"] == pytest.approx(50.0)

    # Above the threshold a question counts as answered "no answer": d becomes right, a wrong.
    probabilities = {"a": 0.9, "b": 0.1, "c": 0.2, "d": 0.8}
    thresholded = evaluate_squad(golds, predictions, "v2.0", probabilities, no_answer_threshold=0.5)
    assert thresholded["NoAns_exact"] == 100.0
    assert thresholded["HasAns_exact"] == 0.0


def test_evaluate_v2_leaves_missing_predictions_out_like_the_official_script():
    scores = evaluate_squad({"a": ["x"], "b": ["y"]}, {"a": "x"}, version="v2.0")
    assert scores["total"] == 1 and scores["exact"] == 100.0
