"""Evaluators: `evaluator(model) -> {metric: value}` over a whole evaluation set, one per task.

Metrics that need every prediction at once (Matthews, F1, Spearman, SQuAD)
are computed here from `model.predict`, once per epoch by `finetune`.

Example:
    >>> evaluate = classification_evaluator(dev_features, dev_labels)
    >>> evaluate(model)
    {'accuracy': 0.91, 'f1': 0.90, 'matthews_correlation': 0.82}
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import keras
import numpy as np

from tfbert.metrics import (
    accuracy,
    evaluate_squad,
    f1_score,
    matthews_correlation,
    pearson_correlation,
    spearman_correlation,
)
from tfbert.tasks.question_answering import QAExample, QAFeatures, decode_answers
from tfbert.tasks.tagging import word_predictions

Evaluator = Callable[[keras.Model], dict[str, float]]


def classification_evaluator(features: Mapping[str, np.ndarray], labels: np.ndarray, batch_size: int = 64) -> Evaluator:
    """Accuracy, F1 (binary for 2 classes, else macro) and Matthews correlation of the argmax."""
    def evaluate(model: keras.Model) -> dict[str, float]:
        predicted = model.predict(dict(features), batch_size=batch_size, verbose=0)["logits"].argmax(-1)
        binary = predicted.max(initial=0) <= 1 and np.max(labels) <= 1
        return {
            "accuracy": accuracy(labels, predicted),
            "f1": f1_score(labels, predicted, average="binary" if binary else "macro"),
            "matthews_correlation": matthews_correlation(labels, predicted),
        }
    return evaluate


def regression_evaluator(features: Mapping[str, np.ndarray], scores: np.ndarray, batch_size: int = 64) -> Evaluator:
    """Pearson and Spearman correlation of the predicted scores (GLUE STS-B)."""
    def evaluate(model: keras.Model) -> dict[str, float]:
        predicted = model.predict(dict(features), batch_size=batch_size, verbose=0)["score"]
        return {"pearson_correlation": pearson_correlation(scores, predicted),
                "spearman_correlation": spearman_correlation(scores, predicted)}
    return evaluate


def similarity_evaluator(pair_features: Mapping[str, np.ndarray], scores: np.ndarray, batch_size: int = 64) -> Evaluator:
    """STS evaluation of a `SiameseEmbedder`: correlation of the cosine of the two embeddings with the gold scores."""
    def evaluate(model: keras.Model) -> dict[str, float]:
        cosine = model.predict(dict(pair_features), batch_size=batch_size, verbose=0)["cosine"]
        return {"pearson_correlation": pearson_correlation(scores, cosine),
                "spearman_correlation": spearman_correlation(scores, cosine)}
    return evaluate


def tagging_evaluator(
    features: Mapping[str, np.ndarray],
    first_pieces: np.ndarray,
    sentences: Sequence[Sequence[str]],
    tags: Sequence[Sequence[int]],
    batch_size: int = 64,
) -> Evaluator:
    """Word accuracy and macro F1 over the word tags (each word read from its first piece)."""
    def evaluate(model: keras.Model) -> dict[str, float]:
        logits = model.predict(dict(features), batch_size=batch_size, verbose=0)["logits"]
        predicted = np.concatenate([np.asarray(row, np.int64) for row in word_predictions(logits, first_pieces, sentences)])
        gold = np.concatenate([np.asarray(row, np.int64) for row in tags])
        return {"accuracy": accuracy(gold, predicted), "f1": f1_score(gold, predicted, average="macro")}
    return evaluate


def multiple_choice_evaluator(features: Mapping[str, np.ndarray], answers: np.ndarray, batch_size: int = 16) -> Evaluator:
    """Accuracy of the highest-scoring choice."""
    def evaluate(model: keras.Model) -> dict[str, float]:
        predicted = model.predict(dict(features), batch_size=batch_size, verbose=0)["logits"].argmax(-1)
        return {"accuracy": accuracy(answers, predicted)}
    return evaluate


def squad_evaluator(
    examples: Sequence[QAExample],
    features: QAFeatures,
    version: str = "v1.1",
    n_best: int = 20,
    max_answer_length: int = 30,
    no_answer_threshold: float = 0.0,
    batch_size: int = 64,
) -> Evaluator:
    """Official SQuAD exact match and F1 (in percent) of the decoded answers."""
    golds = {example.id: list(example.answers) for example in examples}

    def evaluate(model: keras.Model) -> dict[str, float]:
        outputs = model.predict(dict(features.inputs), batch_size=batch_size, verbose=0)
        answers = decode_answers(examples, features, outputs["start_logits"], outputs["end_logits"], n_best=n_best,
                                 max_answer_length=max_answer_length, allow_no_answer=version == "v2.0",
                                 no_answer_threshold=no_answer_threshold)
        scores = evaluate_squad(golds, answers.texts, version=version)
        return {"exact_match": scores["exact"], "f1": scores["f1"]}
    return evaluate
