"""SQuAD features and answers: document-stride windows in, character spans of the original text out.

A context longer than the model's input is cut into overlapping windows of
context pieces (`doc_stride` pieces between window starts), each packed as the
pair (question, window) by the model's packer: `[CLS] question [SEP] window [SEP]`
(RoBERTa-style: `<s> question </s></s> window </s>`). A window's labels point at the answer's
first and last piece when the whole answer lies inside it, otherwise (and for
SQuAD 2.0 questions without an answer) both at position 0, the `[CLS]` token.

Decoding takes the model's start and end logits for every window, keeps the
`n_best` starts and ends of each, discards spans outside the context, longer
than `max_answer_length` pieces, or whose start piece is better centred in
another window, and maps the best span back through the piece offsets to
`context[start_char:end_char]` of the original text. With SQuAD 2.0 the
no-answer score is the best (lowest over windows) `start_logit[0] +
end_logit[0]`; "no answer" (`""`) wins when it beats the best span by more
than `no_answer_threshold`.

Example:
    >>> examples = [QAExample("q1", "Who wrote it?", "It was written by Ada.", ["Ada"], [18])]
    >>> import numpy as np
    >>> from tfbert.text import WordPieceTokenizer
    >>> features = make_features(WordPieceTokenizer("vocab.txt"), examples, max_length=64, doc_stride=32)
    >>> start_logits = np.where(features.inputs["token_ids"] == 15262, 9.0, 0.0)   # as a SpanExtractor gives,
    >>> end_logits = start_logits                                                  # here peaked at "ada"
    >>> decode_answers(examples, features, start_logits, end_logits).texts
    {'q1': 'Ada'}
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from tfbert.data.packing import PackingStyle, num_special_tokens, segment_starts
from tfbert.data.squad_examples import QAExample
from tfbert.finetuning.features import TokenizerLike, pack_rows, pad_rows, tokenizer_and_packer


@dataclasses.dataclass
class QAFeatures:
    """The windows of a set of examples.

    `inputs` and `labels` are `[windows, max_length]` / `[windows]` arrays
    for `fit` and `predict`; `example_index[w]` is the example of window `w`;
    `char_starts`/`char_ends` `[windows, max_length]` are the character span of
    each context piece in its example's context (-1 for the question, special
    tokens and padding); `is_max_context` marks the pieces whose window is the
    one where they have the most context on both sides.
    """

    inputs: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    example_index: np.ndarray
    char_starts: np.ndarray
    char_ends: np.ndarray
    is_max_context: np.ndarray

    def __len__(self) -> int:
        return len(self.example_index)


def window_starts(num_pieces: int, window: int, stride: int) -> list[int]:
    """First context piece of each window: 0, stride, 2 * stride, ... until the last piece is covered.

    Example:
        >>> window_starts(10, window=4, stride=3)
        [0, 3, 6]
    """
    starts = [0]
    while starts[-1] + window < num_pieces:
        starts.append(starts[-1] + stride)
    return starts


def _is_max_context(piece: int, window_start: int, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether the window `[window_start, ...)` is the earliest of the windows `(start, end)` in which
    `piece` has the most context: the largest min(left, right) + 0.01 * window length."""
    def score(span: tuple[int, int]) -> float:
        start, end = span
        return min(piece - start, end - 1 - piece) + 0.01 * (end - start)

    holding = [span for span in spans if span[0] <= piece < span[1]]
    return max(holding, key=score)[0] == window_start


def _answer_pieces(example: QAExample, starts: Sequence[int], ends: Sequence[int]) -> tuple[int, int] | None:
    """First and last piece of the first gold answer, or None (no answer, or none that the pieces cover)."""
    if example.is_impossible or not example.answers:
        return None
    char_start = example.answer_starts[0]
    char_end = char_start + len(example.answers[0])
    inside = [i for i, (start, end) in enumerate(zip(starts, ends)) if end > char_start and start < char_end]
    return (inside[0], inside[-1]) if inside else None


def make_features(
    tokenizer: TokenizerLike,
    examples: Sequence[QAExample],
    max_length: int | None = 384,
    doc_stride: int = 128,
    max_question_length: int = 64,
    *,
    packing_style: PackingStyle | None = None,
) -> QAFeatures:
    """Windows, inputs and labels for `examples` (see the module notes).

    `tokenizer` is a `Preprocessor` (its packing style; its length unless `max_length` is
    given) or a tokenizer packed in `packing_style`, by default its own
    (`tfbert.finetuning.features.tokenizer_and_packer`).
    """
    if doc_stride <= 0:
        raise ValueError(f"doc_stride must be positive, got {doc_stride}")
    pieces, packer = tokenizer_and_packer(tokenizer, max_length, packing_style=packing_style)
    max_length = packer.sequence_length
    questions = pieces.encode_with_offsets([example.question for example in examples])
    contexts = pieces.encode_with_offsets([example.context for example in examples])
    rows: dict[str, list] = {name: [] for name in ("questions", "windows", "starts", "ends", "max_context",
                                                  "start_positions", "end_positions", "example")}
    for index, (example, question, context) in enumerate(zip(examples, questions, contexts)):
        question_ids = question.ids[:max_question_length]
        window = max_length - len(question_ids) - num_special_tokens(packer.style, 2)
        if window < 1:
            raise ValueError(f"max_length {max_length} leaves no room for the context of question {example.id!r}")
        answer = _answer_pieces(example, context.starts, context.ends)
        offset = segment_starts(packer.style, [len(question_ids), 0])[1]
        spans = [(first, min(first + window, len(context)))
                 for first in window_starts(len(context), window, min(doc_stride, window))]
        for first, last in spans:
            inside = answer is not None and first <= answer[0] and answer[1] < last
            rows["start_positions"].append(answer[0] - first + offset if inside else 0)
            rows["end_positions"].append(answer[1] - first + offset if inside else 0)
            rows["questions"].append(question_ids)
            rows["windows"].append(context.ids[first:last])
            rows["starts"].append([-1] * offset + context.starts[first:last])
            rows["ends"].append([-1] * offset + context.ends[first:last])
            rows["max_context"].append([0] * offset + [int(_is_max_context(piece, first, spans))
                                                       for piece in range(first, last)])
            rows["example"].append(index)
    return QAFeatures(
        inputs=pack_rows(packer, rows["questions"], rows["windows"]),
        labels={
            "start_positions": np.asarray(rows["start_positions"], np.int32),
            "end_positions": np.asarray(rows["end_positions"], np.int32),
        },
        example_index=np.asarray(rows["example"], np.int32),
        char_starts=pad_rows(rows["starts"], max_length, -1),
        char_ends=pad_rows(rows["ends"], max_length, -1),
        is_max_context=pad_rows(rows["max_context"], max_length),
    )


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One answer span: its text, character span in the context, score and n-best probability."""

    text: str
    start_char: int
    end_char: int
    score: float
    probability: float = 0.0


@dataclasses.dataclass
class Answers:
    """Decoded answers: `texts` (question id -> text, `""` for no answer), `n_best` candidates
    (best first) and `no_answer_margins` (no-answer score minus best span score)."""

    texts: dict[str, str]
    n_best: dict[str, list[Candidate]]
    no_answer_margins: dict[str, float]


def _softmax(scores: list[float]) -> list[float]:
    if not scores:
        return []
    values = np.exp(np.asarray(scores) - max(scores))
    return (values / values.sum()).tolist()


def decode_answers(
    examples: Sequence[QAExample],
    features: QAFeatures,
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    n_best: int = 20,
    max_answer_length: int = 30,
    allow_no_answer: bool = False,
    no_answer_threshold: float = 0.0,
) -> Answers:
    """The best answer of every example, from the logits of all its windows (see the module notes).

    Args:
        examples, features: what `make_features` was given and returned.
        start_logits, end_logits: `[windows, max_length]` model outputs.
        n_best: starts and ends considered per window, and candidates kept per example.
        max_answer_length: longest answer, in pieces.
        allow_no_answer: SQuAD 2.0: answer `""` when the no-answer score
            exceeds the best span score by more than `no_answer_threshold`.
    """
    start_logits, end_logits = np.asarray(start_logits, np.float64), np.asarray(end_logits, np.float64)
    if len(start_logits) != len(features):
        raise ValueError(f"{len(start_logits)} rows of logits for {len(features)} windows")
    windows_of: dict[int, list[int]] = {}
    for window, example in enumerate(features.example_index):
        windows_of.setdefault(int(example), []).append(window)
    texts, candidates_of, margins = {}, {}, {}
    for index, example in enumerate(examples):
        spans: dict[tuple[int, int], float] = {}
        no_answer_score = np.inf
        for window in windows_of.get(index, []):
            starts, ends = start_logits[window], end_logits[window]
            no_answer_score = min(no_answer_score, starts[0] + ends[0])
            for start in np.argsort(-starts, kind="stable")[:n_best]:
                if features.char_starts[window, start] < 0 or not features.is_max_context[window, start]:
                    continue
                for end in np.argsort(-ends, kind="stable")[:n_best]:
                    if end < start or end - start + 1 > max_answer_length or features.char_ends[window, end] < 0:
                        continue
                    span = (int(features.char_starts[window, start]), int(features.char_ends[window, end]))
                    spans[span] = max(spans.get(span, -np.inf), starts[start] + ends[end])
        ranked = sorted(spans.items(), key=lambda item: -item[1])[:n_best]
        probabilities = _softmax([score for _, score in ranked])
        candidates = [
            Candidate(example.context[start:end], start, end, float(score), probability)
            for ((start, end), score), probability in zip(ranked, probabilities)
        ]
        best = candidates[0].score if candidates else -np.inf
        margins[example.id] = float(no_answer_score - best) if np.isfinite(no_answer_score) else -np.inf
        answer_is_none = not candidates or (allow_no_answer and margins[example.id] > no_answer_threshold)
        texts[example.id] = "" if answer_is_none else candidates[0].text
        candidates_of[example.id] = candidates
    return Answers(texts, candidates_of, margins)
