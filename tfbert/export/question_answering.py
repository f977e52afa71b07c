"""Extractive QA inside the graph: pack question and context, pick the best span, map it to characters.

One window per question: a context longer than the sequence leaves (after the question,
cut to `max_question_length` pieces) is truncated, because document-stride windows would
need a variable number of encoder rows per request. Spans are scored as in
`tfbert.tasks.decode_answers`: `start_logit + end_logit`, both ends inside the context,
at most `max_answer_length` pieces; with `allow_no_answer` (SQuAD 2.0) the answer is
`""` when `[CLS]`'s score beats the best span by more than `no_answer_threshold`.

Example:
    >>> packed = pack_question_and_context(preprocessor, questions, contexts, max_question_length=64)
    >>> spans = best_spans(start_logits, end_logits, packed.context_first, packed.context_count, 30)
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from tfbert.data.packing import keep_first, num_special_tokens, segment_starts
from tfbert.data.preprocessor import Preprocessor
from tfbert.export.offsets import byte_to_char_offsets


@dataclasses.dataclass
class PackedQuestion:
    """Encoder inputs plus where the context pieces sit: `context_first` / `context_count` `[batch]`
    and each context piece's byte span `piece_starts` / `piece_ends` `[batch, pieces]` in `context`."""

    inputs: dict[str, tf.Tensor]
    context: tf.Tensor
    context_first: tf.Tensor
    context_count: tf.Tensor
    piece_starts: tf.Tensor
    piece_ends: tf.Tensor


def pack_question_and_context(preprocessor: Preprocessor, question: tf.Tensor, context: tf.Tensor,
                              max_question_length: int) -> PackedQuestion:
    """`[CLS] question [SEP] context [SEP]` (the preprocessor's layout): question cut to
    `max_question_length`, context to what is left."""
    tokenizer, length = preprocessor.tokenizer, preprocessor.sequence_length
    style = preprocessor.packer.style
    question_ids = tokenizer.tokenize(preprocessor.clean(question))[:, :max_question_length]
    context = preprocessor.clean(context)
    context_ids, starts, ends = tokenizer.tokenize_with_offsets(context)
    room = length - num_special_tokens(style, 2) - question_ids.row_lengths()
    count = tf.minimum(context_ids.row_lengths(), room)
    context_ids, starts, ends = (keep_first(part, count) for part in (context_ids, starts, ends))
    inputs = preprocessor.pack_ids(question_ids, context_ids)
    # bert: [CLS] q [SEP] c; roberta: <s> q </s></s> c
    first = question_ids.row_lengths() + segment_starts(style, [0, 0])[1]
    return PackedQuestion(inputs, context, tf.cast(first, tf.int32), tf.cast(count, tf.int32),
                          starts.to_tensor(0), ends.to_tensor(0))


def best_spans(start_logits: tf.Tensor, end_logits: tf.Tensor, context_first: tf.Tensor, context_count: tf.Tensor,
               max_answer_length: int) -> dict[str, tf.Tensor]:
    """Best `(start, end)` positions `[batch]` with both ends in the context, `end - start < max_answer_length`.

    Returns `start`, `end` (positions; 0 when no span exists), `score` (`start_logit + end_logit`,
    float32) and `found` (bool).
    """
    length = start_logits.shape[1]
    positions = tf.range(length)[None, :]
    in_context = (positions >= context_first[:, None]) & (positions < (context_first + context_count)[:, None])
    lowest = tf.constant(float("-inf"), tf.float32)
    scores, valid = [], []
    for span in range(min(max_answer_length, length)):
        # span = end - start: the end logit of position i + span lined up with the start logit of position i.
        shifted_end = tf.pad(end_logits[:, span:], [[0, 0], [0, span]], constant_values=lowest)
        shifted_in_context = tf.pad(in_context[:, span:], [[0, 0], [0, span]])
        ok = in_context & shifted_in_context
        valid.append(ok)
        scores.append(tf.where(ok, start_logits + shifted_end, lowest))
    scores = tf.reshape(tf.stack(scores, 1), [-1, len(valid) * length])
    found = tf.reduce_any(tf.stack(valid, 1), axis=[1, 2])
    best = tf.argmax(scores, axis=1, output_type=tf.int32)
    start = tf.where(found, best % length, 0)
    end = tf.where(found, start + best // length, 0)
    return {"start": start, "end": end, "score": tf.where(found, tf.reduce_max(scores, axis=1), 0.0), "found": found}


def answers(packed: PackedQuestion, start_logits: tf.Tensor, end_logits: tf.Tensor, max_answer_length: int,
            allow_no_answer: bool = False, no_answer_threshold: float = 0.0) -> dict[str, tf.Tensor]:
    """`answer` (string), character `start`/`end` into the context, `score` and `no_answer_score` `[batch]`."""
    spans = best_spans(start_logits, end_logits, packed.context_first, packed.context_count, max_answer_length)
    no_answer_score = start_logits[:, 0] + end_logits[:, 0]
    answered = spans["found"]
    if allow_no_answer:
        answered &= no_answer_score - spans["score"] <= no_answer_threshold
    first_piece = tf.maximum(spans["start"] - packed.context_first, 0)
    last_piece = tf.maximum(spans["end"] - packed.context_first, 0)
    has_pieces = tf.shape(packed.piece_starts)[1] > 0
    byte_start = tf.cond(has_pieces, lambda: tf.gather(packed.piece_starts, first_piece[:, None], batch_dims=1)[:, 0],
                         lambda: tf.zeros_like(first_piece, tf.int64))
    byte_end = tf.cond(has_pieces, lambda: tf.gather(packed.piece_ends, last_piece[:, None], batch_dims=1)[:, 0],
                       lambda: tf.zeros_like(last_piece, tf.int64))
    byte_start = tf.where(answered, byte_start, 0)
    byte_end = tf.where(answered, byte_end, 0)
    chars = byte_to_char_offsets(packed.context, tf.stack([byte_start, byte_end], 1))
    return {
        "answer": tf.strings.substr(packed.context, byte_start, byte_end - byte_start),
        "start": chars[:, 0],
        "end": chars[:, 1],
        "score": tf.where(answered, spans["score"], no_answer_score),
        "no_answer_score": no_answer_score,
    }
