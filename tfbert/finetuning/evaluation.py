"""Evaluators: `evaluator(model) -> {metric: value}` over a whole evaluation set, one per task.

Metrics that need every prediction at once (Matthews, F1, Spearman, SQuAD)
are computed here from `model.predict`, once per epoch by `finetune`.

Example:
    >>> import keras
    >>> from tfbert.finetuning.features import encode_texts
    >>> from tfbert.data.text_examples import read_text_examples
    >>> from tfbert.text import load_tokenizer
    >>> dev = read_text_examples("train.tsv", text_columns=("sentence",), label_column="label")
    >>> dev_features = encode_texts(load_tokenizer("runs/sst2/tokenizer"), dev.texts, max_length=16)
    >>> evaluate = classification_evaluator(dev_features, dev.labels)
    >>> evaluate(keras.models.load_model("runs/sst2/best.keras"))     # two steps of training on four lines
    {'accuracy': 0.5, 'f1': 0.0, 'matthews_correlation': 0.0}
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import keras
import numpy as np

from tfbert.data.squad_examples import QAExample
from tfbert.finetuning.question_answering import QAFeatures, decode_answers
from tfbert.finetuning.tagging import word_predictions
from tfbert.metrics import (
    accuracy,
    evaluate_squad,
    f1_score,
    matthews_correlation,
    paired_cosine,
    sts_correlations,
)

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
    check_varied_scores(scores)

    def evaluate(model: keras.Model) -> dict[str, float]:
        predicted = model.predict(dict(features), batch_size=batch_size, verbose=0)["score"]
        return sts_correlations(scores, predicted)
    return evaluate


def check_varied_scores(scores: np.ndarray) -> None:
    """`ValueError` when every gold score is the same: no correlation with them is defined (0/0)."""
    scores = np.asarray(scores)
    if scores.size and np.ptp(scores) == 0:
        raise ValueError(f"every evaluation score is {float(scores.flat[0]):g}: a correlation with constant scores "
                         "is undefined, so no epoch could be judged; give evaluation pairs with different scores")


def side_features(pair_features: Mapping[str, np.ndarray], side: str) -> dict[str, np.ndarray]:
    """The encoder inputs of one side of pair features: `first_token_ids` -> `token_ids`, ..."""
    prefix = f"{side}_"
    return {name[len(prefix):]: values for name, values in pair_features.items() if name.startswith(prefix)}


class SidesEmbedder:
    """Embeds each side's texts (each text alone, as at serving time) in one `predict` call, padding sides of
    different widths to the widest.

    The model is a `SentenceEmbedder` or a training model with `.embedder()` (`SiameseEmbedder`,
    `EmbeddingDistiller`), whose embedder is built once and reused every epoch (one trace).

    Example:
        >>> from tfbert.finetuning.features import encode_texts
        >>> from tfbert.models.tasks.embedding import SentenceEmbedder
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder
        >>> from tfbert.text import load_tokenizer
        >>> tokenizer = load_tokenizer("runs/bert/tokenizer")
        >>> first_features = encode_texts(tokenizer, ["a man plays", "a cat sleeps"], max_length=16)
        >>> second_features = encode_texts(tokenizer, ["a man is playing", "a dog runs"], max_length=16)
        >>> first, second = SidesEmbedder([first_features, second_features])(SentenceEmbedder(load_pretrained_encoder("runs/bert")))
        >>> first.shape, second.shape
        ((2, 128), (2, 128))
    """

    def __init__(self, sides: Sequence[Mapping[str, np.ndarray]], batch_size: int = 64):
        self.sides, self.batch_size, self._embedders = list(sides), batch_size, {}

    def __call__(self, model: keras.Model) -> list[np.ndarray]:
        if id(model) not in self._embedders:
            self._embedders = {id(model): model.embedder() if hasattr(model, "embedder") else model}
        return embed_sides(self._embedders[id(model)], self.sides, self.batch_size)


def embed_sides(embedder: keras.Model, sides: Sequence[Mapping[str, np.ndarray]], batch_size: int = 64) -> list[np.ndarray]:
    """`[embeddings of side 0, of side 1, ...]` from a `SentenceEmbedder`, in one `predict` call."""
    width = max(side["token_ids"].shape[1] for side in sides)
    stacked = {name: np.concatenate([np.pad(side[name], ((0, 0), (0, width - side[name].shape[1]))) for side in sides])
               for name in sides[0]}
    vectors = embedder.predict(stacked, batch_size=batch_size, verbose=0)["embedding"]
    return np.split(vectors, np.cumsum([len(side["token_ids"]) for side in sides])[:-1])


def similarity_evaluator(pair_features: Mapping[str, np.ndarray], scores: np.ndarray, batch_size: int = 64) -> Evaluator:
    """STS evaluation of a sentence embedder: Pearson and Spearman correlation of the cosine of the `first_*`
    and `second_*` texts' embeddings with the gold scores (see `SidesEmbedder` for the models it takes)."""
    check_varied_scores(scores)
    embed = SidesEmbedder([side_features(pair_features, side) for side in ("first", "second")], batch_size)

    def evaluate(model: keras.Model) -> dict[str, float]:
        first, second = embed(model)
        return sts_correlations(scores, paired_cosine(first, second))
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
