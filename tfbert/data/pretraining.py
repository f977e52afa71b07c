"""Pretraining examples from a stream of documents, all in `tf.data`.

Objectives:

* ``"nsp"`` (BERT): a chunk of consecutive sentences is cut in two; half the
  time the second part really follows (label 0, "is next"), otherwise it is
  replaced by a segment of another document (label 1) and the unused
  sentences are put back for the next chunk, as in BERT.
* ``"sop"`` (ALBERT): the two parts of a chunk in order (label 0) or swapped
  (label 1).
* ``"full_sentences"`` (RoBERTa): whole sentences packed contiguously up to the
  length, running on into the next document after an extra separator.
* ``"doc_sentences"`` (RoBERTa): the same, but a sequence never crosses a
  document boundary.
* ``"electra_segments"`` (ELECTRA, Clark et al., 2020, `build_pretraining_dataset.py`):
  consecutive sentences of one document as two segments in order
  (`[CLS] a [SEP] b [SEP]`) or, with probability `single_segment_prob`, as one
  (`[CLS] a [SEP]`); no label, `b` always really follows `a`. They are the SOP
  pairs put back in order.

For NSP and SOP, each chunk's target length is the maximum, or with
probability `short_seq_prob` a length drawn uniformly from [2, maximum]
(BERT's short sequences). A chunk holding a single sentence is cut inside the
sentence, so its two parts are still consecutive text.

Documents are 1-D string tensors of sentences (see `tfbert.data.readers`).
Each document is tokenized once per use and handled on its own in
`Dataset.map`; the "other" documents for NSP come from a second, shuffled
pass over the same source, so nothing but the shuffle buffer is held in
memory.
"""

from __future__ import annotations

from typing import Callable, Literal

import tensorflow as tf

from tfbert.data.masking import MaskedLMMasker, mask_dataset
from tfbert.data.packing import SegmentPacker, num_special_tokens
from tfbert.data.readers import cut_rows

Objective = Literal["nsp", "sop", "full_sentences", "doc_sentences", "electra_segments"]
Tokenizer = Callable[[tf.Tensor], tf.RaggedTensor]

LABEL_KEYS = {"nsp": "next_sentence_labels", "sop": "sentence_order_labels"}
TWO_SEGMENT_OBJECTIVES = (*LABEL_KEYS, "electra_segments")


def shuffled(dataset: tf.data.Dataset, buffer_size: int, seed: int | None = None) -> tf.data.Dataset:
    """`dataset` shuffled with a buffer of `buffer_size` (seeded, anew every pass); as it is when 0."""
    if buffer_size <= 0:
        return dataset
    return dataset.shuffle(buffer_size, seed=seed, reshuffle_each_iteration=True)


def tokenize_documents(
    documents: tf.data.Dataset,
    tokenizer: Tokenizer,
    max_sentence_tokens: int,
    num_parallel_calls: int = tf.data.AUTOTUNE,
) -> tf.data.Dataset:
    """Documents of sentences -> int32 ragged `[num_sentences, None]` token ids.

    Sentences with no tokens are dropped and sentences longer than
    `max_sentence_tokens` are cut into pieces of at most that many tokens, so
    no later step ever sees an unbounded sentence; documents left empty are
    dropped.

    >>> from tfbert.data.readers import text_line_documents
    >>> from tfbert.text import WordPieceTokenizer
    >>> docs = text_line_documents("corpus.txt")
    >>> tokenized = tokenize_documents(docs, WordPieceTokenizer("vocab.txt").tokenize, 125)
    >>> tuple(next(iter(tokenized)).shape)      # sentences, pieces
    (200, None)
    """

    def tokenize(sentences):
        ids = tokenizer(sentences)
        if ids.shape.rank == 3:
            ids = ids.merge_dims(1, 2)
        return split_long_sentences(tf.cast(ids, tf.int32), max_sentence_tokens)

    tokenized = documents.map(tokenize, num_parallel_calls=num_parallel_calls)
    return tokenized.filter(lambda document: document.nrows() > 0)


def split_long_sentences(sentences: tf.RaggedTensor, max_tokens: int) -> tf.RaggedTensor:
    """Cut each row into consecutive pieces of at most `max_tokens`; drop empty rows (`readers.cut_rows`).

    >>> split_long_sentences(tf.ragged.constant([[1, 2, 3, 4, 5], [], [6]]), 2).to_list()
    [[1, 2], [3, 4], [5], [6]]
    """
    return cut_rows(sentences, max_tokens)


def sentence_pairs(
    document: tf.RaggedTensor,
    other_document: tf.RaggedTensor,
    seed: tf.Tensor,
    *,
    objective: Literal["nsp", "sop"],
    max_num_tokens: int,
    short_seq_prob: float = 0.1,
) -> dict[str, tf.RaggedTensor | tf.Tensor]:
    """NSP or SOP pairs from one tokenized document (BERT's / ALBERT's procedure).

    Returns `first` and `second` (ragged `[num_pairs, None]` token ids),
    `label` (int32 `[num_pairs]`) and `target_length` (the length each chunk
    aimed at). `other_document` supplies the random next segments for NSP.
    """
    splits = tf.cast(document.row_splits, tf.int32)
    other_splits = tf.cast(other_document.row_splits, tf.int32)
    num_sentences = tf.shape(splits)[0] - 1
    num_other_sentences = tf.shape(other_splits)[0] - 1
    other_offset = splits[-1]

    def uniform_int(draw_seed, low, high):
        """An int in [low, high), high > low."""
        return tf.random.stateless_uniform([], draw_seed, minval=low, maxval=high, dtype=tf.int32)

    def first_index_reaching(cumulative, start, length):
        """The first j with cumulative[j] >= cumulative[start] + length."""
        return tf.searchsorted(cumulative, (cumulative[start] + length)[tf.newaxis], side="left")[0]

    def body(step, start, ranges, labels, targets):
        draw = tf.unstack(tf.random.experimental.stateless_split(
            tf.random.experimental.stateless_fold_in(seed, step), 6))
        short = tf.random.stateless_uniform([], draw[0]) < short_seq_prob
        target = tf.where(short, uniform_int(draw[1], 2, max_num_tokens + 1), max_num_tokens)
        end = tf.clip_by_value(first_index_reaching(splits, start, target), start + 1, num_sentences)
        chunk_sentences = end - start
        chunk_tokens = splits[end] - splits[start]

        cut_sentence = start + uniform_int(draw[2], 1, tf.maximum(chunk_sentences, 2))
        cut_token = splits[start] + uniform_int(draw[3], 1, tf.maximum(chunk_tokens, 2))
        a_start = splits[start]
        a_end = tf.where(chunk_sentences >= 2, splits[tf.minimum(cut_sentence, end)], tf.minimum(cut_token, splits[end]))
        b_start, b_end = a_end, splits[end]
        flipped = tf.random.stateless_uniform([], draw[4]) < 0.5

        if objective == "nsp":
            random_start = uniform_int(draw[5], 0, tf.maximum(num_other_sentences, 1))
            random_target = tf.maximum(target - (a_end - a_start), 1)
            random_end = tf.clip_by_value(
                first_index_reaching(other_splits, random_start, random_target),
                random_start + 1, tf.maximum(num_other_sentences, 1))
            use_other = flipped & (num_other_sentences > 0)
            b_start = tf.where(use_other, other_offset + other_splits[random_start], b_start)
            b_end = tf.where(use_other, other_offset + other_splits[random_end], b_end)
            # BERT puts the unused sentences of the chunk back.
            next_start = tf.where(use_other & (chunk_sentences >= 2), cut_sentence, end)
            label = tf.cast(use_other, tf.int32)
        else:
            a_start, a_end, b_start, b_end = (
                tf.where(flipped, b_start, a_start), tf.where(flipped, b_end, a_end),
                tf.where(flipped, a_start, b_start), tf.where(flipped, a_end, b_end))
            next_start = end
            label = tf.cast(flipped, tf.int32)

        ranges = ranges.write(step, tf.stack([a_start, a_end, b_start, b_end]))
        return step + 1, next_start, ranges, labels.write(step, label), targets.write(step, target)

    _, _, ranges, labels, targets = tf.while_loop(
        lambda step, start, *_: start < num_sentences,
        body,
        (tf.constant(0), tf.constant(0),
         tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[4]),
         tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[]),
         tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[])),
    )
    ranges = tf.reshape(ranges.stack(), [-1, 4])
    tokens = tf.concat([document.flat_values, other_document.flat_values], axis=0)
    return {
        "first": tf.gather(tokens, tf.ragged.range(ranges[:, 0], ranges[:, 1])),
        "second": tf.gather(tokens, tf.ragged.range(ranges[:, 2], ranges[:, 3])),
        "label": labels.stack(),
        "target_length": targets.stack(),
    }


def contiguous_chunks(sentences: tf.RaggedTensor, max_num_tokens: int) -> tf.RaggedTensor:
    """Greedily pack whole consecutive sentences into chunks of at most `max_num_tokens`.

    Every sentence must already be at most `max_num_tokens` long
    (`split_long_sentences`).

    >>> contiguous_chunks(tf.ragged.constant([[1, 2], [3], [4, 5, 6], [7]]), 3).to_list()
    [[1, 2, 3], [4, 5, 6], [7]]
    """
    splits = tf.cast(sentences.row_splits, tf.int32)
    num_sentences = tf.shape(splits)[0] - 1

    def body(start, boundaries):
        fits = tf.searchsorted(splits, (splits[start] + max_num_tokens)[tf.newaxis], side="right")[0] - 1
        end = tf.clip_by_value(fits, start + 1, num_sentences)
        return end, boundaries.write(boundaries.size(), splits[end])

    _, boundaries = tf.while_loop(
        lambda start, _: start < num_sentences,
        body,
        (tf.constant(0), tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[])),
    )
    chunk_splits = tf.concat([[0], boundaries.stack()], axis=0)
    return tf.RaggedTensor.from_row_splits(sentences.flat_values, tf.cast(chunk_splits, tf.int64))


def pair_examples(
    tokenized_documents: tf.data.Dataset,
    *,
    objective: Literal["nsp", "sop"],
    max_num_tokens: int,
    short_seq_prob: float = 0.1,
    other_document_buffer: int = 1000,
    seed: int | None = None,
    repeat: bool = False,
) -> tf.data.Dataset:
    """A stream of tokenized documents -> a stream of `{"first", "second", "label"}` pairs.

    For NSP the random segments come from a second pass over
    `tokenized_documents`, shuffled with `other_document_buffer` and repeated;
    of two candidates the first that is not the current document is used.
    `repeat=True` pairs the documents pass after pass, without end.

    `repeat` is not the same as repeating `tokenized_documents` beforehand: the second pass is then
    shuffled within one pass of the documents, so its buffer fills with at most all of them. Over an
    endless stream it would fill with `other_document_buffer` documents, that is, a corpus of two
    documents tokenized 500 times over before the first pair.
    """
    indexed = tokenized_documents.enumerate()
    passes = indexed.repeat() if repeat else indexed
    seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)
    if objective == "nsp":
        others = indexed.shuffle(other_document_buffer, seed=seed, reshuffle_each_iteration=True).repeat().batch(2)
    else:
        others = passes.map(lambda index, document: (index[tf.newaxis], tf.expand_dims(document, 0)))
    combined = tf.data.Dataset.zip((passes, others, seeds))

    def build(current, candidates, element_seed):
        index, document = current
        candidate_indices, candidate_documents = candidates
        other = tf.cond(
            tf.not_equal(candidate_indices[0], index),
            lambda: candidate_documents[0],
            lambda: candidate_documents[-1],
        )
        pairs = sentence_pairs(
            document, other, element_seed,
            objective=objective, max_num_tokens=max_num_tokens, short_seq_prob=short_seq_prob)
        return {"first": pairs["first"], "second": pairs["second"], "label": pairs["label"]}

    pairs = combined.map(build, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).unbatch()
    return pairs.filter(lambda pair: (tf.size(pair["first"]) > 0) & (tf.size(pair["second"]) > 0))


def consecutive_segment_examples(
    tokenized_documents: tf.data.Dataset,
    *,
    max_num_tokens: int,
    single_segment_prob: float = 0.1,
    short_seq_prob: float = 0.1,
    seed: int | None = None,
) -> tf.data.Dataset:
    """Tokenized documents -> `{"first", "second"}` consecutive segments (`second` empty for one segment)."""
    pairs = pair_examples(tokenized_documents, objective="sop", max_num_tokens=max_num_tokens,
                          short_seq_prob=short_seq_prob, seed=seed)
    coins = tf.data.Dataset.random(seed=None if seed is None else seed + 2, rerandomize_each_iteration=True)

    def in_order(pair, coin):
        swapped = pair["label"] > 0
        first = tf.cond(swapped, lambda: pair["second"], lambda: pair["first"])
        second = tf.cond(swapped, lambda: pair["first"], lambda: pair["second"])
        single = tf.cast(coin % 1_000_000, tf.float32) / 1_000_000.0 < single_segment_prob
        joined = tf.concat([first, second], 0)
        return {
            "first": tf.cond(single, lambda: joined, lambda: first),
            "second": tf.cond(single, lambda: second[:0], lambda: second),
        }

    return tf.data.Dataset.zip((pairs, coins)).map(in_order, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def pack_one_or_two_segments(packer: SegmentPacker, first: tf.RaggedTensor, second: tf.RaggedTensor) -> dict:
    """`packer([first, second])`, with rows whose `second` is empty packed as one segment.

    The packer would give such a row `[CLS] a [SEP] [SEP]`; the lone second `[SEP]` (the only
    token of segment 1) is turned into padding.
    """
    packed = packer([first, second])
    empty = tf.equal(tf.cast(second.row_lengths(), tf.int32), 0)[:, tf.newaxis]
    lone = empty & (packed["segment_ids"] > 0)
    return {
        "token_ids": tf.where(lone, packer.pad_id, packed["token_ids"]),
        "segment_ids": tf.where(lone, 0, packed["segment_ids"]),
        "padding_mask": tf.where(lone, 0, packed["padding_mask"]),
    }


def contiguous_examples(
    tokenized_documents: tf.data.Dataset,
    *,
    max_num_tokens: int,
    cross_documents: bool,
    separator_id: int,
) -> tf.data.Dataset:
    """RoBERTa FULL-SENTENCES (`cross_documents=True`) or DOC-SENTENCES chunks, 1-D token ids.

    With `cross_documents`, the last, unfilled chunk of a document is carried
    into the next one, followed by `separator_id`; a `scan` keeps that carry.
    A document boundary that falls between two chunks gets no separator.
    """
    if not cross_documents:
        return tokenized_documents.map(
            lambda document: contiguous_chunks(document, max_num_tokens),
            num_parallel_calls=tf.data.AUTOTUNE, deterministic=True,
        ).unbatch()

    def step(carry, element):
        document, is_end = element
        separator = tf.fill([tf.cast(tf.logical_not(is_end), tf.int32)], separator_id)
        carry_row = tf.RaggedTensor.from_row_lengths(
            tf.concat([carry, separator], 0), [tf.size(carry) + tf.size(separator)])
        sentences = tf.cond(tf.size(carry) > 0, lambda: tf.concat([carry_row, document], 0), lambda: document)
        chunks = _drop_lone_separator(contiguous_chunks(sentences, max_num_tokens), tf.size(carry))
        last_length = tf.cast(tf.reduce_sum(chunks.row_lengths()[-1:]), tf.int32)
        # Keep the last chunk open while a separator and one more token still fit.
        keep_last = tf.logical_not(is_end) & (chunks.nrows() > 0) & (last_length < max_num_tokens - 1)
        num_emitted = chunks.nrows() - tf.cast(keep_last, tf.int64)
        emitted = chunks[:num_emitted]
        next_carry = tf.cond(keep_last, lambda: chunks[-1], lambda: tf.zeros([0], tf.int32))
        return next_carry, (emitted.flat_values, emitted.row_lengths())

    end_marker = tf.data.Dataset.from_tensors(
        (tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32), tf.zeros([0], tf.int64)), True))
    marked = tokenized_documents.map(lambda document: (document, False)).concatenate(end_marker)
    chunked = marked.scan(tf.zeros([0], tf.int32), step)
    return chunked.map(lambda values, lengths: tf.RaggedTensor.from_row_lengths(values, lengths)).unbatch()


def _drop_lone_separator(chunks: tf.RaggedTensor, carry_length: tf.Tensor) -> tf.RaggedTensor:
    """Drop the separator ending the first chunk when that chunk is only the carried text.

    That happens when the next document's first sentence does not fit beside
    the carry; the separator would then mark a boundary with nothing after it.
    """
    lengths = tf.cast(chunks.row_lengths(), tf.int32)
    lone = (carry_length > 0) & (tf.size(lengths) > 0) & tf.equal(tf.reduce_sum(lengths[:1]), carry_length + 1)
    keep = tf.logical_not(lone & tf.equal(tf.range(tf.size(chunks.flat_values)), carry_length))
    first_row = tf.one_hot(0, tf.size(lengths), dtype=tf.int32)
    new_lengths = lengths - tf.cast(lone, tf.int32) * first_row
    return tf.RaggedTensor.from_row_lengths(tf.boolean_mask(chunks.flat_values, keep), tf.cast(new_lengths, tf.int64))


def pretraining_dataset(
    documents: tf.data.Dataset,
    tokenizer: Tokenizer,
    *,
    objective: Objective,
    packer: SegmentPacker,
    masker: MaskedLMMasker,
    batch_size: int,
    seed: int | None = None,
    short_seq_prob: float = 0.1,
    other_document_buffer: int = 1000,
    shuffle_buffer: int = 0,
    single_segment_prob: float = 0.1,
    repeat: bool = False,
) -> tf.data.Dataset:
    """Documents -> packed, masked, batched pretraining examples (`drop_remainder=True`).

    Examples come in document order unless `shuffle_buffer` > 0: then they are
    shuffled (seeded by `seed`, anew every pass) with a buffer of that many
    before batching, as BERT and ALBERT shuffle their instances. Unshuffled, a
    batch holds consecutive chunks of one or two documents, whose gradients
    are strongly correlated: a small model learns markedly slower.

    Elements are dicts of `[batch_size, ...]` tensors: the packer's
    `token_ids`, `segment_ids`, `padding_mask`, the masker's outputs and, for
    "nsp" / "sop", `next_sentence_labels` / `sentence_order_labels`.
    `single_segment_prob` is used by "electra_segments" only. `repeat=True` makes examples of
    `documents` pass after pass, without end, as training for a number of steps needs (better than
    repeating `documents` beforehand for NSP: see `pair_examples`).

    >>> from tfbert.data.readers import text_line_documents
    >>> from tfbert.text import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer("vocab.txt")
    >>> packer = SegmentPacker(32, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id, style="bert")
    >>> masker = MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=4)
    >>> ds = pretraining_dataset(text_line_documents("corpus.txt"), tokenizer.tokenize,
    ...                          objective="nsp", packer=packer, masker=masker,
    ...                          batch_size=8, seed=0)
    >>> batch = next(iter(ds))
    >>> tuple(batch["token_ids"].shape), sorted(batch)
    ((8, 32), ['masked_ids', 'masked_positions', 'masked_weights', 'next_sentence_labels', 'padding_mask', 'segment_ids', 'token_ids'])
    """
    num_segments = 2 if objective in TWO_SEGMENT_OBJECTIVES else 1
    max_num_tokens = packer.sequence_length - num_special_tokens(packer.style, num_segments)
    tokenized = tokenize_documents(documents, tokenizer, max_num_tokens)
    repeated = tokenized.repeat() if repeat else tokenized
    pairing_seed = None if seed is None else seed + 1

    if objective in LABEL_KEYS:
        examples = pair_examples(
            tokenized, objective=objective, max_num_tokens=max_num_tokens, short_seq_prob=short_seq_prob,
            other_document_buffer=other_document_buffer, seed=pairing_seed, repeat=repeat)
        label_key = LABEL_KEYS[objective]

        def pack(batch):
            packed = packer([batch["first"], batch["second"]])
            packed[label_key] = batch["label"]
            return packed
    elif objective in ("full_sentences", "doc_sentences"):
        examples = contiguous_examples(
            repeated, max_num_tokens=max_num_tokens,
            cross_documents=objective == "full_sentences", separator_id=packer.sep_id)

        def pack(batch):
            return packer([batch])
    elif objective == "electra_segments":
        examples = consecutive_segment_examples(
            repeated, max_num_tokens=max_num_tokens, single_segment_prob=single_segment_prob,
            short_seq_prob=short_seq_prob, seed=pairing_seed)

        def pack(batch):
            return pack_one_or_two_segments(packer, batch["first"], batch["second"])
    else:
        raise ValueError(f"unknown objective {objective!r}")

    batches = shuffled(examples, shuffle_buffer, seed).ragged_batch(batch_size, drop_remainder=True)
    return _packed_and_masked(batches, pack, masker, batch_size, seed)


def line_by_line_dataset(
    lines: tf.data.Dataset,
    tokenizer: Tokenizer,
    *,
    packer: SegmentPacker,
    masker: MaskedLMMasker,
    batch_size: int,
    seed: int | None = None,
    shuffle_buffer: int = 0,
) -> tf.data.Dataset:
    """Text lines -> one packed, masked example per non-blank line, cut to the packer's length.

    As Hugging Face's `LineByLineTextDataset` with `DataCollatorForLanguageModeling`: every line
    is one segment (`[CLS] line [SEP]`), truncated, never joined with its neighbours; lines are
    shuffled with a buffer of `shuffle_buffer` (0: file order). Elements are as `pretraining_dataset`'s
    without sentence-pair labels.

    >>> from tfbert.text import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer("vocab.txt")
    >>> packer = SegmentPacker(16, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id, style="bert")
    >>> masker = MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=2)
    >>> ds = line_by_line_dataset(tf.data.TextLineDataset("corpus.txt"), tokenizer.tokenize, packer=packer,
    ...                           masker=masker, batch_size=32, seed=0)
    >>> tuple(next(iter(ds))["token_ids"].shape)
    (32, 16)
    """
    lines = lines.map(tf.strings.strip).filter(lambda line: tf.strings.length(line) > 0)
    batches = shuffled(lines, shuffle_buffer, seed).batch(batch_size, drop_remainder=True)

    def pack(batch):
        ids = tokenizer(batch)
        if ids.shape.rank == 3:
            ids = ids.merge_dims(1, 2)
        return packer([tf.cast(ids, tf.int32)])

    return _packed_and_masked(batches, pack, masker, batch_size, seed)


def _packed_and_masked(batches: tf.data.Dataset, pack: Callable, masker: MaskedLMMasker, batch_size: int,
                       seed: int | None) -> tf.data.Dataset:
    """`pack` each batch, mask it (anew every pass), with the static batch size the model's graph needs."""

    def with_static_batch(features):
        return {name: tf.ensure_shape(value, [batch_size] + value.shape[1:]) for name, value in features.items()}

    packed = batches.map(lambda batch: with_static_batch(pack(batch)),
                         num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    masked = mask_dataset(packed, masker, seed=seed).map(with_static_batch)
    return masked.prefetch(tf.data.AUTOTUNE)
