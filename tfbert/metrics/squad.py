"""SQuAD exact match and F1, with the definitions of the official evaluation scripts.

Answers are normalised by lower-casing, removing ASCII punctuation, removing
the articles a/an/the as whole words and collapsing whitespace. Each
prediction gets the best score over its gold answers.

SQuAD 2.0 (`version="v2.0"`): a question without gold answers (or whose gold
answers all normalise to the empty string) has the single gold answer `""`;
the empty prediction means "no answer", and an empty prediction or gold scores
F1 1 only when both are empty. With `no_answer_probabilities`, a question
whose probability exceeds `no_answer_threshold` counts as answered with "no
answer" (right when it has no gold answers at all). v1.1 scores an empty prediction against a non-empty gold with F1 0
and an unanswered question with 0; v2.0 leaves questions without a
prediction out of the totals, as its script does.

Example:
    >>> squad_exact_match("The Eiffel Tower!", ["eiffel tower"])
    1.0
    >>> round(squad_f1("in Paris, France", ["Paris"]), 3)
    0.5
"""

from __future__ import annotations

import collections
import re
import string
from typing import Mapping, Sequence

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
VERSIONS = ("v1.1", "v2.0")


def normalize_answer(text: str) -> str:
    """Lower case, drop punctuation, drop a/an/the, collapse whitespace (the official order)."""
    text = "".join(character for character in text.lower() if character not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


def _f1_one(prediction: str, gold: str, version: str) -> float:
    predicted, expected = _tokens(prediction), _tokens(gold)
    if version == "v2.0" and (not predicted or not expected):
        return float(predicted == expected)
    common = sum((collections.Counter(predicted) & collections.Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def _golds(golds: Sequence[str], version: str) -> list[str]:
    if version not in VERSIONS:
        raise ValueError(f"unknown SQuAD version {version!r}; expected one of {', '.join(VERSIONS)}")
    if version == "v2.0":
        golds = [gold for gold in golds if normalize_answer(gold)] or [""]
    elif not golds:
        raise ValueError("a SQuAD v1.1 question needs at least one gold answer")
    return list(golds)


def squad_exact_match(prediction: str, golds: Sequence[str], version: str = "v2.0") -> float:
    """1.0 when the normalised prediction equals a normalised gold answer, else 0.0."""
    target = normalize_answer(prediction)
    return float(any(normalize_answer(gold) == target for gold in _golds(golds, version)))


def squad_f1(prediction: str, golds: Sequence[str], version: str = "v2.0") -> float:
    """Best bag-of-tokens F1 of the normalised prediction against the gold answers."""
    return max(_f1_one(prediction, gold, version) for gold in _golds(golds, version))


def evaluate_squad(
    golds: Mapping[str, Sequence[str]],
    predictions: Mapping[str, str],
    version: str = "v1.1",
    no_answer_probabilities: Mapping[str, float] | None = None,
    no_answer_threshold: float = 1.0,
) -> dict[str, float]:
    """Corpus scores in percent, as the official script prints them.

    Args:
        golds: question id -> gold answer texts (empty for a v2.0 unanswerable question).
        predictions: question id -> predicted text (`""` for no answer).
        version: `"v1.1"` or `"v2.0"`.
        no_answer_probabilities, no_answer_threshold: v2.0 only; see the module notes.

    Returns:
        `exact`, `f1`, `total`, and for v2.0 also `HasAns_*` and `NoAns_*` when
        such questions exist.

    Example:
        >>> evaluate_squad({"q1": ["Denver Broncos"]}, {"q1": "the Denver Broncos"})
        {'exact': 100.0, 'f1': 100.0, 'total': 1}
    """
    exact_scores: dict[str, float] = {}
    f1_scores: dict[str, float] = {}
    for question_id, answers in golds.items():
        if question_id not in predictions:
            if version == "v1.1":
                exact_scores[question_id] = f1_scores[question_id] = 0.0
            continue
        prediction = predictions[question_id]
        exact_scores[question_id] = squad_exact_match(prediction, answers, version)
        f1_scores[question_id] = squad_f1(prediction, answers, version)
        probability = (no_answer_probabilities or {}).get(question_id, 0.0)
        if version == "v2.0" and probability > no_answer_threshold:
            exact_scores[question_id] = f1_scores[question_id] = float(not answers)
    results = _percentages(exact_scores, f1_scores, list(exact_scores))
    if version == "v2.0":
        has_answer = [qid for qid in exact_scores if golds[qid]]
        no_answer = [qid for qid in exact_scores if not golds[qid]]
        for prefix, ids in (("HasAns", has_answer), ("NoAns", no_answer)):
            if ids:
                results.update({f"{prefix}_{name}": value
                                for name, value in _percentages(exact_scores, f1_scores, ids).items()})
    return results


def _percentages(exact_scores: Mapping[str, float], f1_scores: Mapping[str, float], ids: list[str]) -> dict[str, float]:
    total = len(ids)
    if not total:
        return {"exact": 0.0, "f1": 0.0, "total": 0}
    return {
        "exact": 100.0 * sum(exact_scores[qid] for qid in ids) / total,
        "f1": 100.0 * sum(f1_scores[qid] for qid in ids) / total,
        "total": total,
    }
