"""SQuAD windows with a document stride, and decoding logits back to exact character spans."""

import numpy as np
import pytest

from tfbert.data.squad_examples import QAExample
from tfbert.finetuning.question_answering import decode_answers, make_features, window_starts

from task_fixtures import WhitespaceTokenizer, minilm_tokenizer


def one_hot_logits(features, starts, ends, high=10.0):
    shape = features.inputs["token_ids"].shape
    start_logits, end_logits = np.zeros(shape), np.zeros(shape)
    start_logits[np.arange(len(starts)), starts] = high
    end_logits[np.arange(len(ends)), ends] = high
    return start_logits, end_logits


def test_window_starts_cover_the_context():
    assert window_starts(3, window=5, stride=2) == [0]
    assert window_starts(10, window=4, stride=3) == [0, 3, 6]
    assert window_starts(10, window=4, stride=2) == [0, 2, 4, 6]


def test_windows_and_labels_over_a_long_context():
    words = [f"w{i}" for i in range(30)]
    context = " ".join(words)
    answer_start = context.index("w17")
    example = QAExample("q", "where is it", context, ["w17 w18"], [answer_start])
    features = make_features(WhitespaceTokenizer(), [example], max_length=16, doc_stride=5)
    # 3 question pieces + 3 specials leave 10 context pieces per window; starts 0, 5, 10, 15, 20.
    assert len(features) == 5
    assert features.example_index.tolist() == [0] * 5
    tokens_per_window = features.inputs["padding_mask"].sum(1)
    assert tokens_per_window.tolist() == [16, 16, 16, 16, 16]
    starts, ends = features.labels["start_positions"], features.labels["end_positions"]
    # windows [10, 20) and [15, 25) hold w17..w18 ([CLS] + 3 question pieces + [SEP] before the context).
    assert starts.tolist() == [0, 0, 5 + 7, 5 + 2, 0] and ends.tolist() == [0, 0, 5 + 8, 5 + 3, 0]
    for window in (2, 3):
        span = context[features.char_starts[window, starts[window]]:features.char_ends[window, ends[window]]]
        assert span == "w17 w18"
    assert (features.inputs["segment_ids"][0, :5] == 0).all() and (features.inputs["segment_ids"][0, 5:] == 1).all()


def test_answer_outside_every_window_after_truncation_and_impossible_questions_point_at_cls():
    tokenizer = WhitespaceTokenizer()
    impossible = QAExample("q2", "what", "a b c", [], [], is_impossible=True)
    features = make_features(tokenizer, [impossible], max_length=16, doc_stride=4)
    assert features.labels["start_positions"].tolist() == [0] and features.labels["end_positions"].tolist() == [0]


def test_unicode_contexts_map_back_to_the_exact_original_characters(assets):
    context = "Der Zürcher Künstler Jean Tinguely (1925–1991) baute „Heureka“ für die Expo 64 in Lausanne. 東京 is far."
    answers = ["Jean Tinguely", "„Heureka“", "Lausanne", "1925–1991", "東京"]
    examples = [QAExample(f"q{i}", "what?", context, [answer], [context.index(answer)])
                for i, answer in enumerate(answers)]
    features = make_features(minilm_tokenizer(assets), examples, max_length=64, doc_stride=16)
    start_logits, end_logits = one_hot_logits(
        features, features.labels["start_positions"], features.labels["end_positions"])
    decoded = decode_answers(examples, features, start_logits, end_logits)
    # Pieces drop the quotation marks' surroundings only when the tokenizer splits them off: compare spans.
    for example in examples:
        text = decoded.texts[example.id]
        assert text == example.answers[0]
        assert decoded.n_best[example.id][0].start_char == example.answer_starts[0]


def test_long_unicode_context_with_stride_decodes_from_the_window_holding_the_answer(assets):
    filler = " ".join(["naïve café"] * 40)
    context = f"{filler} The answer is Œuvre Ünïcode. {filler}"
    example = QAExample("q", "which?", context, ["Œuvre Ünïcode"], [context.index("Œuvre")])
    features = make_features(minilm_tokenizer(assets), [example], max_length=48, doc_stride=20)
    assert len(features) > 5
    labelled = features.labels["start_positions"] > 0
    assert labelled.sum() >= 1
    start_logits, end_logits = one_hot_logits(
        features, features.labels["start_positions"], features.labels["end_positions"])
    assert decode_answers([example], features, start_logits, end_logits).texts == {"q": "Œuvre Ünïcode"}


def manual_example():
    context = "alpha beta gamma delta epsilon zeta"
    example = QAExample("q", "x", context)
    features = make_features(WhitespaceTokenizer(), [example], max_length=12, doc_stride=4)
    assert len(features) == 1  # 1 question piece + 3 specials + 6 context pieces
    return example, features


def test_n_best_is_ordered_by_score_with_probabilities_and_deduplicated():
    example, features = manual_example()
    start_logits, end_logits = np.zeros((1, 12)), np.zeros((1, 12))
    # context pieces sit at positions 3..8 (alpha..zeta)
    start_logits[0, [3, 4, 5]] = [5.0, 4.0, 1.0]
    end_logits[0, [4, 5, 6]] = [3.0, 6.0, 2.0]
    answers = decode_answers([example], features, start_logits, end_logits, n_best=4)
    candidates = answers.n_best["q"]
    assert [c.text for c in candidates] == ["alpha beta gamma", "beta gamma", "alpha beta", "alpha beta gamma delta"]
    assert [c.score for c in candidates] == [11.0, 10.0, 8.0, 7.0]
    assert np.isclose(sum(c.probability for c in candidates), 1.0)
    assert all(a.probability >= b.probability for a, b in zip(candidates, candidates[1:]))
    assert answers.texts == {"q": "alpha beta gamma"}


def test_max_answer_length_and_spans_outside_the_context_are_excluded():
    example, features = manual_example()
    start_logits, end_logits = np.zeros((1, 12)), np.zeros((1, 12))
    start_logits[0, 3] = 9.0      # alpha
    end_logits[0, 8] = 9.0        # zeta: 6 pieces long
    end_logits[0, 5] = 1.0        # gamma: 3 pieces
    start_logits[0, 1] = 20.0     # a question piece: never a start
    end_logits[0, 10] = 20.0      # padding: never an end
    assert decode_answers([example], features, start_logits, end_logits).texts["q"] == "alpha beta gamma delta epsilon zeta"
    assert decode_answers([example], features, start_logits, end_logits, max_answer_length=3).texts["q"] == "alpha beta gamma"


def test_no_answer_threshold():
    example, features = manual_example()
    start_logits, end_logits = np.zeros((1, 12)), np.zeros((1, 12))
    start_logits[0, 4], end_logits[0, 4] = 3.0, 3.0      # "beta": 6
    start_logits[0, 0], end_logits[0, 0] = 4.0, 3.5      # no answer: 7.5
    decode = lambda **kw: decode_answers([example], features, start_logits, end_logits, **kw)
    assert decode().texts["q"] == "beta"                  # SQuAD 1.1: always a span
    assert decode(allow_no_answer=True).texts["q"] == ""
    assert decode(allow_no_answer=True, no_answer_threshold=2.0).texts["q"] == "beta"
    assert decode().no_answer_margins["q"] == pytest.approx(1.5)


def test_a_piece_in_two_windows_is_only_answered_from_its_best_centred_window():
    context = " ".join(f"w{i}" for i in range(12))
    example = QAExample("q", "x", context)
    features = make_features(WhitespaceTokenizer(), [example], max_length=10, doc_stride=3)
    # 6 context pieces per window, windows [0, 6), [3, 9), [6, 12); context starts at position 3.
    assert len(features) == 3
    position = lambda window, piece: 3 + piece - 3 * window
    # w5: 5 left / 0 right in window 0, 2 / 3 in window 1. w4: 4 / 1 and 1 / 4, a tie: the earlier window.
    assert features.is_max_context[0, position(0, 5)] == 0 and features.is_max_context[1, position(1, 5)] == 1
    assert features.is_max_context[0, position(0, 4)] == 1 and features.is_max_context[1, position(1, 4)] == 0
    start_logits, end_logits = np.full((3, 10), -100.0), np.full((3, 10), -100.0)
    start_logits[0, position(0, 5)] = end_logits[0, position(0, 5)] = 50.0   # w5 starting in window 0: excluded
    start_logits[1, position(1, 5)] = end_logits[1, position(1, 5)] = 1.0
    answers = decode_answers([example], features, start_logits, end_logits)
    assert answers.texts["q"] == "w5"
    assert answers.n_best["q"][0].score == 2.0
