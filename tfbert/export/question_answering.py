"""Extractive QA inside the graph: strided windows of the context, the best span over all of them in characters.

A context longer than one window is cut into overlapping windows of context pieces, `doc_stride`
pieces between window starts, each packed as `[CLS] question [SEP] window [SEP]` (the
preprocessor's layout), exactly as `tfbert.tasks.make_features` cuts SQuAD features; every window
is one encoder row, so a request of `b` questions runs `b..b * max_windows` rows. Spans are
scored as in `tfbert.tasks.decode_answers`: `start_logit + end_logit`, both ends inside the
window's context, at most `max_answer_length` pieces, the start piece in the window where it has
the most context on both sides; the best span of all windows wins. With `allow_no_answer`
(SQuAD 2.0) the answer is `""` when the lowest `[CLS]` score over the windows beats the best
span by more than `no_answer_threshold`. Pieces past `max_windows` windows are not read (a
defined truncation that bounds the encoder's work per request).

Example:
    >>> from tfbert.models.tasks.question_answering import SpanExtractor
    >>> from tfbert.finetuning.pretrained import load_pretrained_encoder, load_pretrained_preprocessor
    >>> model = SpanExtractor(load_pretrained_encoder("runs/bert"))          # untrained: any span
    >>> preprocessor = load_pretrained_preprocessor("runs/bert", sequence_length=32)
    >>> questions, contexts = tf.constant(["who wrote it?"]), tf.constant(["Botchan was written by Natsume Soseki."])
    >>> packed = pack_question_windows(preprocessor, questions, contexts, max_question_length=8,
    ...                                doc_stride=8, max_windows=16)
    >>> logits = model(packed.inputs)
    >>> answers(packed, logits["start_logits"], logits["end_logits"], max_answer_length=30)["answer"].shape
    TensorShape([1])
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from tfbert.data.packing import num_special_tokens, segment_starts
from tfbert.data.preprocessor import Preprocessor
from tfbert.export.offsets import byte_to_char_offsets


@dataclasses.dataclass
class WindowedQuestion:
    """Encoder inputs `[windows, length]` and where each window sits.

    `example` `[windows]`: the question a window belongs to; `context_first` / `context_count`
    `[windows]`: position and number of the window's context pieces; `piece_offset` `[windows]`:
    index of the window's first piece in `piece_starts` / `piece_ends`, the byte spans of all
    context pieces in `context` (flat, one extra 0 at the end); `start_allowed`
    `[windows, length]`: positions where an answer may start (context, most context).
    """

    inputs: dict[str, tf.Tensor]
    context: tf.Tensor
    example: tf.Tensor
    context_first: tf.Tensor
    context_count: tf.Tensor
    piece_offset: tf.Tensor
    piece_starts: tf.Tensor
    piece_ends: tf.Tensor
    start_allowed: tf.Tensor


def pack_question_windows(preprocessor: Preprocessor, question: tf.Tensor, context: tf.Tensor,
                          max_question_length: int, doc_stride: int, max_windows: int) -> WindowedQuestion:
    """The question (cut to `max_question_length` pieces) with each strided window of the context."""
    tokenizer, length, style = preprocessor.tokenizer, preprocessor.sequence_length, preprocessor.packer.style
    question_ids = tokenizer.tokenize(preprocessor.clean(question))[:, :max_question_length]
    context = preprocessor.clean(context)
    context_ids, starts, ends = tokenizer.tokenize_with_offsets(context)
    question_lengths = question_ids.row_lengths()
    room = length - num_special_tokens(style, 2) - question_lengths
    stride = tf.minimum(tf.constant(doc_stride, tf.int64), room)
    pieces = context_ids.row_lengths()
    # window_starts(): 0, stride, ... until a window reaches the last piece
    windows = 1 + (tf.maximum(pieces - room, 0) + stride - 1) // stride
    window_index = tf.ragged.range(tf.minimum(windows, max_windows))
    example = window_index.value_rowids()
    first = window_index.values * tf.gather(stride, example)
    count = tf.minimum(tf.gather(room, example), tf.gather(pieces, example) - first)
    piece_offset = tf.gather(context_ids.row_starts(), example) + first
    window_ids = tf.gather(context_ids.values, tf.ragged.range(piece_offset, piece_offset + count))
    inputs = preprocessor.pack_ids(tf.gather(question_ids, example), window_ids)
    # bert: [CLS] q [SEP] c; roberta: <s> q </s></s> c
    context_first = tf.gather(question_lengths, example) + segment_starts(style, [0, 0])[1]
    allowed = _most_context(piece_offset, count, context_first, length, tf.reduce_sum(pieces))
    zero = tf.zeros([1], tf.int64)
    return WindowedQuestion(inputs, context, tf.cast(example, tf.int32), tf.cast(context_first, tf.int32),
                            tf.cast(count, tf.int32), piece_offset, tf.concat([starts.values, zero], 0),
                            tf.concat([ends.values, zero], 0), allowed)


def _most_context(piece_offset: tf.Tensor, count: tf.Tensor, context_first: tf.Tensor, length: int,
                  total_pieces: tf.Tensor) -> tf.Tensor:
    """`[windows, length]`: context positions whose piece has its most context in this window (the
    earliest on a tie): the largest `min(left, right) + 0.01 * window pieces`, as SQuAD's reference."""
    piece = tf.range(length, dtype=tf.int64)[None, :] - context_first[:, None]
    in_context = (piece >= 0) & (piece < count[:, None])
    left_right = tf.cast(tf.minimum(piece, count[:, None] - 1 - piece), tf.float64)
    score = tf.where(in_context, left_right + 0.01 * tf.cast(count[:, None], tf.float64), -1.0)
    flat_piece = tf.where(in_context, piece_offset[:, None] + piece, total_pieces)   # padding: one spare segment
    segments = total_pieces + 1
    best = tf.math.unsorted_segment_max(score, flat_piece, segments)
    row = tf.broadcast_to(tf.range(tf.shape(score, out_type=tf.int64)[0])[:, None], tf.shape(score, out_type=tf.int64))
    holder = tf.where(score == tf.gather(best, flat_piece), row, tf.int64.max)
    earliest = tf.math.unsorted_segment_min(holder, flat_piece, segments)
    return in_context & (row == tf.gather(earliest, flat_piece))


def best_spans(start_logits: tf.Tensor, end_logits: tf.Tensor, context_first: tf.Tensor, context_count: tf.Tensor,
               max_answer_length: int, start_allowed: tf.Tensor | None = None) -> dict[str, tf.Tensor]:
    """Best `(start, end)` positions `[rows]` with both ends in the context, `end - start < max_answer_length`
    and, where `start_allowed` `[rows, length]` is given, the start at an allowed position.

    Returns `start`, `end` (positions; 0 when no span exists), `score` (`start_logit + end_logit`,
    float32, `-inf` when none) and `found` (bool).
    """
    length = start_logits.shape[1]
    positions = tf.range(length)[None, :]
    in_context = (positions >= context_first[:, None]) & (positions < (context_first + context_count)[:, None])
    starts_ok = in_context if start_allowed is None else in_context & start_allowed
    lowest = tf.constant(float("-inf"), tf.float32)
    scores, valid = [], []
    for span in range(min(max_answer_length, length)):
        # span = end - start: the end logit of position i + span lined up with the start logit of position i.
        shifted_end = tf.pad(end_logits[:, span:], [[0, 0], [0, span]], constant_values=lowest)
        shifted_in_context = tf.pad(in_context[:, span:], [[0, 0], [0, span]])
        ok = starts_ok & shifted_in_context
        valid.append(ok)
        scores.append(tf.where(ok, start_logits + shifted_end, lowest))
    scores = tf.reshape(tf.stack(scores, 1), [-1, len(valid) * length])
    found = tf.reduce_any(tf.stack(valid, 1), axis=[1, 2])
    best = tf.argmax(scores, axis=1, output_type=tf.int32)
    start = tf.where(found, best % length, 0)
    end = tf.where(found, start + best // length, 0)
    return {"start": start, "end": end, "score": tf.where(found, tf.reduce_max(scores, axis=1), lowest),
            "found": found}


def _best_window(example: tf.Tensor, score: tf.Tensor, batch: tf.Tensor) -> tf.Tensor:
    """`[batch]`: the row of each question's best-scoring window (the earliest on a tie)."""
    # unsorted_segment_max starts from the lowest finite float, so a question whose windows all score
    # -inf (an empty context: no span) would match none of them.
    score = tf.maximum(score, score.dtype.min)
    best = tf.math.unsorted_segment_max(score, example, batch)
    rows = tf.range(tf.shape(score)[0])
    return tf.math.unsorted_segment_min(tf.where(score == tf.gather(best, example), rows, tf.int32.max), example, batch)


def answers(packed: WindowedQuestion, start_logits: tf.Tensor, end_logits: tf.Tensor, max_answer_length: int,
            allow_no_answer: bool = False, no_answer_threshold: float = 0.0) -> dict[str, tf.Tensor]:
    """`answer` (string), character `start`/`end` into the context, `score` and `no_answer_score` `[batch]`."""
    spans = best_spans(start_logits, end_logits, packed.context_first, packed.context_count, max_answer_length,
                       packed.start_allowed)
    batch = tf.shape(packed.context)[0]
    row = _best_window(packed.example, spans["score"], batch)
    found, score = tf.gather(spans["found"], row), tf.gather(spans["score"], row)
    no_answer_score = tf.math.unsorted_segment_min(start_logits[:, 0] + end_logits[:, 0], packed.example, batch)
    answered = found
    if allow_no_answer:
        answered &= no_answer_score - score <= no_answer_threshold
    first = tf.gather(packed.context_first, row)
    offset = tf.gather(packed.piece_offset, row)
    spare = tf.shape(packed.piece_starts, out_type=tf.int64)[0] - 1   # the extra 0 byte offset
    first_piece = tf.where(answered, offset + tf.cast(tf.gather(spans["start"], row) - first, tf.int64), spare)
    last_piece = tf.where(answered, offset + tf.cast(tf.gather(spans["end"], row) - first, tf.int64), spare)
    byte_start, byte_end = tf.gather(packed.piece_starts, first_piece), tf.gather(packed.piece_ends, last_piece)
    chars = byte_to_char_offsets(packed.context, tf.stack([byte_start, byte_end], 1))
    return {
        "answer": tf.strings.substr(packed.context, byte_start, byte_end - byte_start),
        "start": chars[:, 0],
        "end": chars[:, 1],
        "score": tf.where(answered, score, no_answer_score),
        "no_answer_score": no_answer_score,
    }
