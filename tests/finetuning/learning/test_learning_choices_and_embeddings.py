"""Multiple choice and sentence embeddings learn through `finetune`, beating chance and their
untrained scores on held-out data; they run on MiniLM's first two layers with a compact token table
(see conftest.py)."""

import numpy as np
import pytest

from tfbert.finetuning.evaluation import multiple_choice_evaluator
from tfbert.finetuning.features import encode_choices, encode_texts
from tfbert.finetuning.finetune import finetune
from tfbert.models.tasks import MultipleChoice

from learning_data import WORDS, fresh_encoder

pytestmark = pytest.mark.slow


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
    from tfbert.finetuning.evaluation import similarity_evaluator
    from tfbert.models.tasks import SiameseEmbedder

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
