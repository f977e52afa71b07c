"""Tagging and extractive question answering learn through `finetune`, beating their baselines on
held-out data; they run on MiniLM's first two layers with a compact token table (see conftest.py)."""

import numpy as np
import pytest

from tfbert.finetuning.evaluation import squad_evaluator, tagging_evaluator
from tfbert.finetuning.finetune import finetune
from tfbert.models.tasks import SpanExtractor, TokenClassifier
from tfbert.data.squad_examples import QAExample
from tfbert.finetuning.question_answering import make_features
from tfbert.finetuning.tagging import encode_tagged_words

from learning_data import WORDS, fresh_encoder

pytestmark = pytest.mark.slow


def number_sentences(rng, count):
    """Words with runs of numbers; tags O=0, B-NUM=1, I-NUM=2."""
    sentences, tags = [], []
    for _ in range(count):
        words, row = [], []
        for _ in range(rng.integers(4, 9)):
            if rng.random() < 0.3:
                run = [str(rng.integers(1, 10_000)) for _ in range(rng.integers(1, 3))]
                words += run
                row += [1] + [2] * (len(run) - 1)
            else:
                words.append(str(rng.choice(WORDS)))
                row.append(0)
        sentences.append(words)
        tags.append(row)
    return sentences, tags


def test_tagging_numbers_beats_tagging_everything_outside(small_encoder_weights, vocabulary, tmp_path):
    rng = np.random.default_rng(1)
    train_sentences, train_tags = number_sentences(rng, 160)
    dev_sentences, dev_tags = number_sentences(rng, 60)
    features, labels, _ = encode_tagged_words(vocabulary, train_sentences, train_tags, max_length=32)
    dev_features, _, dev_first = encode_tagged_words(vocabulary, dev_sentences, dev_tags, max_length=32)
    result = finetune(
        lambda encoder: TokenClassifier(encoder, num_tags=3),
        fresh_encoder(small_encoder_weights, vocabulary), features, labels,
        tagging_evaluator(dev_features, dev_first, dev_sentences, dev_tags),
        monitor="f1", model_dir=tmp_path, epochs=3, batch_size=16, learning_rate=1e-3, seed=0,
    )
    gold = np.concatenate(dev_tags)
    majority = np.mean(gold == 0)
    print(f"tagging: {result.best_scores} vs all-O accuracy {majority:.2f}, macro F1 {1 / 3 * 2 * majority / (1 + majority):.2f}")
    assert result.best_scores["accuracy"] >= majority + 0.15
    assert result.best_scores["f1"] >= 0.8


def code_examples(rng, count):
    """Contexts of filler words with one 'code <number>'; the answer is the number."""
    examples = []
    for index in range(count):
        words = [str(rng.choice(WORDS)) for _ in range(rng.integers(12, 40))]
        position = int(rng.integers(0, len(words)))
        answer = str(rng.integers(10, 100_000))
        words[position:position] = ["code", answer]
        context = " ".join(words)
        start = context.index(f"code {answer}") + 5
        examples.append(QAExample(f"q{index}", "what is the code?", context, [answer], [start]))
    return examples


def test_question_answering_finds_the_pattern_across_windows(small_encoder_weights, vocabulary, tmp_path):
    rng = np.random.default_rng(2)
    train, dev = code_examples(rng, 200), code_examples(rng, 40)
    train_features = make_features(vocabulary, train, max_length=32, doc_stride=12)
    dev_features = make_features(vocabulary, dev, max_length=32, doc_stride=12)
    assert len(dev_features) > len(dev)          # long contexts were cut into several windows
    evaluate = squad_evaluator(dev, dev_features, version="v1.1")
    result = finetune(
        SpanExtractor, fresh_encoder(small_encoder_weights, vocabulary), train_features.inputs, train_features.labels,
        evaluate, monitor="f1", model_dir=tmp_path, epochs=3, batch_size=16, learning_rate=1e-3, seed=0,
    )
    # Baseline: the first word of the context.
    baseline = np.mean([example.context.split()[0] == example.answers[0] for example in dev]) * 100
    print(f"QA: {result.best_scores} vs first-word baseline EM {baseline:.1f}")
    assert result.best_scores["exact_match"] >= 60.0 > baseline + 50
