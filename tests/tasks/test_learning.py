"""Each task learns through `finetune`, beating its baseline on held-out data.

The constructed tasks run on the first two layers of all-MiniLM-L6-v2
(pretrained embeddings, a third of the cost) with a token table cut to the
pieces each test's data uses (`CompactVocabulary`); classification on Pang &
Lee uses the whole MiniLM and is marked slow.
"""

import numpy as np
import pytest

from tfbert.tasks.evaluation import (
    classification_evaluator,
    multiple_choice_evaluator,
    squad_evaluator,
    tagging_evaluator,
)
from tfbert.tasks.features import encode_choices, encode_texts
from tfbert.tasks.finetune import finetune
from tfbert.tasks.models import MultipleChoice, SequenceClassifier, SpanExtractor, TokenClassifier
from tfbert.tasks.question_answering import QAExample, make_features
from tfbert.tasks.tagging import encode_tagged_words

from task_fixtures import CompactVocabulary, compact_encoder, minilm_tokenizer, truncated_minilm

WORDS = ("house river green table music paper window garden yellow friend morning winter doctor "
         "letter bridge market silver forest dinner coffee travel summer school planet story horse "
         "mountain kitchen station orange camera pencil island castle rabbit bottle").split()


@pytest.fixture(scope="module")
def tokenizer(assets):
    return minilm_tokenizer(assets)


@pytest.fixture
def vocabulary(tokenizer):
    return CompactVocabulary(tokenizer)


@pytest.fixture(scope="module")
def small_encoder_weights(assets):
    encoder = truncated_minilm(assets)
    return encoder.config, encoder.get_weights()


def fresh_encoder(config_and_weights, vocabulary):
    config, weights = config_and_weights
    return compact_encoder(config, weights, vocabulary)


@pytest.mark.slow
def test_classification_on_pang_lee_beats_the_majority_class(assets, tokenizer, tmp_path):
    lines = assets("labelled/pang_lee_polarity.cor").read_text(encoding="cp1252", errors="replace").splitlines()
    labels = np.array([line.startswith("__label__pos") for line in lines], np.int32)
    texts = [line.split(" ", 1)[1].strip() for line in lines]
    order = np.random.default_rng(0).permutation(len(texts))
    train, held_out = order[:150], order[150:]
    features = encode_texts(tokenizer, texts, max_length=32)
    pick = lambda rows: {name: value[rows] for name, value in features.items()}
    result = finetune(
        lambda encoder: SequenceClassifier(encoder, num_classes=2, pooling="mean"),
        assets("minilm/config.json").parent,
        pick(train), labels[train],
        classification_evaluator(pick(held_out), labels[held_out]),
        monitor="accuracy", model_dir=tmp_path, epochs=4, batch_size=16, learning_rate=1e-4, seed=0,
    )
    majority = max(labels[held_out].mean(), 1 - labels[held_out].mean())
    print(f"Pang & Lee held-out accuracy {result.best_scores['accuracy']:.2f} vs majority {majority:.2f}")
    assert result.best_scores["accuracy"] >= majority + 0.12
    assert (tmp_path / "best.keras").is_file() and (tmp_path / "best.json").is_file()
    # the returned model carries the best epoch's weights
    assert classification_evaluator(pick(held_out), labels[held_out])(result.model) == result.best_scores


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


def choice_examples(rng, count, choices=4):
    """The right choice shares a word with the question; the others share none."""
    contexts, rows, answers = [], [], []
    for _ in range(count):
        picked = rng.choice(len(WORDS), size=choices * 2 + 2, replace=False)
        words = [WORDS[i] for i in picked]
        shared, question_other = words[0], words[1]
        answer = int(rng.integers(choices))
        row = [f"{words[2 + 2 * c]} {words[3 + 2 * c]}" for c in range(choices)]
        row[answer] = f"{shared} {words[3 + 2 * answer]}" if rng.random() < 0.5 else f"{words[2 + 2 * answer]} {shared}"
        contexts.append(f"{question_other} {shared}" if rng.random() < 0.5 else f"{shared} {question_other}")
        rows.append(row)
        answers.append(answer)
    return contexts, rows, np.array(answers, np.int32)


def test_multiple_choice_picks_the_choice_sharing_a_word(small_encoder_weights, vocabulary, tmp_path):
    rng = np.random.default_rng(3)
    train_contexts, train_choices, train_answers = choice_examples(rng, 240)
    dev_contexts, dev_choices, dev_answers = choice_examples(rng, 60)
    features = encode_choices(vocabulary, train_contexts, train_choices, max_length=12)
    dev_features = encode_choices(vocabulary, dev_contexts, dev_choices, max_length=12)
    result = finetune(
        lambda encoder: MultipleChoice(encoder, pooling="mean"), fresh_encoder(small_encoder_weights, vocabulary),
        features, train_answers, multiple_choice_evaluator(dev_features, dev_answers),
        monitor="accuracy", model_dir=tmp_path, epochs=3, batch_size=16, learning_rate=5e-4, seed=0,
    )
    print(f"multiple choice: {result.best_scores} vs chance 0.25")
    assert result.best_scores["accuracy"] >= 0.6


def topic_pairs(rng, count, same_fraction=0.5):
    """Sentences of 2 words from one of 4 arbitrary groups of 9 words, plus 3 filler words.

    Gold similarity: 1 for two sentences of the same group, 0 otherwise; no
    pretrained model knows these groups.
    """
    groups = np.array_split(np.array(WORDS[:36]), 4)
    filler = ["the", "and", "with", "very", "some", "near"]

    def sentence(group):
        words = [*rng.choice(groups[group], 2, replace=False), *rng.choice(filler, 3)]
        return " ".join(rng.permutation(words))

    firsts, seconds, scores = [], [], []
    for _ in range(count):
        group = int(rng.integers(4))
        same = rng.random() < same_fraction
        other = group if same else int((group + rng.integers(1, 4)) % 4)
        firsts.append(sentence(group))
        seconds.append(sentence(other))
        scores.append(float(same))
    return firsts, seconds, np.array(scores, np.float32)


def pair_features(tokenizer, firsts, seconds, max_length=12):
    features = {}
    for side, texts in (("first", firsts), ("second", seconds)):
        features.update({f"{side}_{name}": value for name, value in encode_texts(tokenizer, texts, max_length=max_length).items()})
    return features


@pytest.mark.parametrize("loss", ["multiple-negatives", pytest.param("cosine", marks=pytest.mark.slow)])
def test_sentence_embeddings_learn_the_groups(small_encoder_weights, vocabulary, tmp_path, loss):
    from tfbert.tasks.evaluation import similarity_evaluator
    from tfbert.tasks.models import SiameseEmbedder

    rng = np.random.default_rng(4)
    # multiple-negatives: positives only (other rows are the negatives); cosine: labelled positive and negative pairs
    train_first, train_second, train_scores = topic_pairs(rng, 192,
                                                          same_fraction=1.0 if loss == "multiple-negatives" else 0.5)
    dev = topic_pairs(rng, 80)
    evaluate = similarity_evaluator(pair_features(vocabulary, dev[0], dev[1]), dev[2])
    train_features = pair_features(vocabulary, train_first, train_second)
    before = evaluate(SiameseEmbedder(fresh_encoder(small_encoder_weights, vocabulary)))["spearman_correlation"]
    result = finetune(
        lambda encoder: SiameseEmbedder(encoder, pooling="mean", loss=loss),
        fresh_encoder(small_encoder_weights, vocabulary), train_features,
        None if loss == "multiple-negatives" else train_scores, evaluate,
        monitor="spearman_correlation", model_dir=tmp_path, epochs=3, batch_size=16, learning_rate=5e-4, seed=0,
    )
    after = result.best_scores["spearman_correlation"]
    print(f"embeddings ({loss}): STS Spearman {before:.2f} before, {after:.2f} after")
    assert after >= 0.7 and after >= before + 0.25
