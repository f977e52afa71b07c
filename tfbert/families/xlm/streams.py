"""XLM / XLM-R data: text streams (CLM, MLM), translation pairs (TLM) and language sampling.

Following Lample & Conneau (2019):

* **Streams** (CLM and MLM): the sentences of one language's corpus, each followed by a
  separator, are concatenated into one stream and cut into chunks of exactly
  `sequence_length` tokens, with no padding and no document boundaries respected (a
  `scan` carries the unfinished chunk into the next document). Every token gets the stream's
  language id and positions run `0..length-1`. For CLM the targets are the next tokens, which
  `XLMPretrainingModel(objective="clm")` takes from `token_ids` itself, so CLM batches are
  inputs only. For MLM the chunks are masked with `MaskedLMMasker` (separators are special
  tokens and never masked).
* **TLM**: a translation pair becomes `start a sep sep b sep` (the second sentence has its own
  leading separator, as XLM's `</s> b </s>`); `segment_ids` are 0 on the first part and 1 on the
  second, `position_ids` restart at 0 on the second part (`tlm_position_ids`), `language_ids`
  are the first language's id on the first part and the second's on the second (padding: the
  first's), and masking covers both sentences, so a masked word can be read off the translation.
* **Sampling across languages**: a language with `n_i` sentences is drawn with probability
  `q_i = p_i^alpha / sum_j p_j^alpha`, `p_i = n_i / sum_j n_j` (alpha 0.5 in XLM, 0.3 in
  XLM-R), by `tf.data.Dataset.sample_from_datasets`.

Example:
    >>> import tfbert
    >>> from tfbert.data.parallel import parallel_text_lines
    >>> from tfbert.data.readers import text_line_documents
    >>> tokenizer = tfbert.text.load_tokenizer("vocab/")
    >>> masker = MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=4)
    >>> tlm = tlm_dataset(parallel_text_lines("kjv.en", "rv.es"), tokenizer, masker=masker,
    ...                   sequence_length=32, batch_size=4, language_ids=(0, 1), seed=0)
    >>> en = stream_dataset(text_line_documents("kjv.en"), tokenizer, language_id=0, sequence_length=32)
    >>> es = stream_dataset(text_line_documents("rv.es"), tokenizer, language_id=1, sequence_length=32)
    >>> mixed = sample_languages([en, es], sizes=[1_000_000, 50_000], alpha=0.5, seed=0)
    >>> tuple(next(iter(tlm))["token_ids"].shape), tuple(next(iter(mixed))["token_ids"].shape)
    ((4, 32), (32,))
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from tfbert.data.masking import MaskedLMMasker, mask_dataset
from tfbert.data.pretraining import split_long_sentences

MODEL_INPUTS = ("token_ids", "segment_ids", "padding_mask", "language_ids", "position_ids")


def language_sampling_probabilities(sizes: Sequence[float], alpha: float) -> np.ndarray:
    """`q_i = p_i^alpha / sum_j p_j^alpha` with `p_i = n_i / sum_j n_j`.

    >>> language_sampling_probabilities([90, 10], alpha=0.5).round(3).tolist()
    [0.75, 0.25]
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    if sizes.ndim != 1 or sizes.size == 0 or np.any(sizes <= 0):
        raise ValueError(f"sizes must be positive counts, one per language; got {sizes.tolist()}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1]; got {alpha}")
    smoothed = (sizes / sizes.sum()) ** alpha
    return smoothed / smoothed.sum()


def sample_languages(
    datasets: Sequence[tf.data.Dataset],
    sizes: Sequence[float],
    *,
    alpha: float,
    seed: int | None = None,
) -> tf.data.Dataset:
    """Interleave per-language datasets (each repeated forever) with probabilities ∝ p_i^alpha."""
    if len(datasets) != len(sizes):
        raise ValueError(f"{len(datasets)} datasets but {len(sizes)} sizes")
    weights = language_sampling_probabilities(sizes, alpha)
    return tf.data.Dataset.sample_from_datasets(
        [dataset.repeat() for dataset in datasets], weights=weights.astype(np.float32).tolist(), seed=seed)


def _sentence_tokens(tokenizer, max_sentence_tokens: int):
    def tokenize(sentences):
        ids = tokenizer(sentences)
        if isinstance(ids, tf.RaggedTensor) and ids.shape.rank == 3:
            ids = ids.merge_dims(1, 2)
        return split_long_sentences(tf.cast(ids, tf.int32), max_sentence_tokens)
    return tokenize


def stream_chunks(
    tokenized_documents: tf.data.Dataset, *, sequence_length: int, separator_id: int
) -> tf.data.Dataset:
    """Ragged `[sentences, None]` documents -> 1-D chunks of exactly `sequence_length` ids.

    Every sentence is followed by `separator_id`; the text runs on across documents and the
    final partial chunk is dropped.

    Example:
        >>> docs = tf.data.Dataset.from_tensors(tf.ragged.constant([[5, 6], [7, 8, 9]]))
        >>> [c.tolist() for c in stream_chunks(docs, sequence_length=3, separator_id=1).as_numpy_iterator()]
        [[5, 6, 1], [7, 8, 9]]
    """

    def with_separators(document):
        separators = tf.fill([document.nrows(), 1], tf.constant(separator_id, tf.int32))
        return tf.concat([tf.cast(document, tf.int32), tf.RaggedTensor.from_tensor(separators)], axis=1).flat_values

    def step(carry, tokens):
        joined = tf.concat([carry, tokens], 0)
        count = tf.size(joined) // sequence_length
        chunks = tf.reshape(joined[:count * sequence_length], [count, sequence_length])
        return joined[count * sequence_length:], chunks

    flat = tokenized_documents.map(with_separators, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return flat.scan(tf.zeros([0], tf.int32), step).unbatch()


def stream_examples(
    documents: tf.data.Dataset,
    tokenizer,
    *,
    language_id: int,
    sequence_length: int,
    separator_id: int | None = None,
) -> tf.data.Dataset:
    """Documents of sentence strings -> unbatched stream examples (the encoder's XLM inputs).

    `tokenizer` is a `tfbert.text` tokenizer (its `tokenize` and `sep_id` are used) or a
    callable from strings to ragged ids (then `separator_id` is required).
    """
    tokenize = getattr(tokenizer, "tokenize", tokenizer)
    separator_id = tokenizer.sep_id if separator_id is None else separator_id
    tokenized = documents.map(_sentence_tokens(tokenize, sequence_length), num_parallel_calls=tf.data.AUTOTUNE,
                              deterministic=True).filter(lambda document: document.nrows() > 0)
    chunks = stream_chunks(tokenized, sequence_length=sequence_length, separator_id=separator_id)

    def features(chunk):
        zeros = tf.zeros_like(chunk)
        return {
            "token_ids": chunk,
            "segment_ids": zeros,
            "padding_mask": tf.ones_like(chunk),
            "language_ids": tf.fill(tf.shape(chunk), tf.constant(language_id, tf.int32)),
            "position_ids": tf.range(sequence_length, dtype=tf.int32),
        }

    return chunks.map(features)


def stream_dataset(
    documents: tf.data.Dataset,
    tokenizer,
    *,
    language_id: int,
    sequence_length: int,
    batch_size: int | None = None,
    masker: MaskedLMMasker | None = None,
    seed: int | None = None,
) -> tf.data.Dataset:
    """CLM (no `masker`) or MLM (`masker`) stream examples, batched if `batch_size` is given.

    Batching before masking is faster; with `batch_size=None` the examples stay unbatched
    (e.g. to mix languages with `sample_languages` and batch afterwards, then `mask_dataset`).
    """
    examples = stream_examples(documents, tokenizer, language_id=language_id, sequence_length=sequence_length)
    if batch_size is not None:
        examples = examples.batch(batch_size, drop_remainder=True)
    if masker is not None:
        examples = mask_dataset(examples, masker, seed=seed)
    return examples


def tlm_position_ids(segment_ids: tf.Tensor, padding_mask: tf.Tensor) -> tf.Tensor:
    """Positions restarting at 0 where the second part (segment 1) starts; padding keeps its index.

    >>> tlm_position_ids(tf.constant([[0, 0, 0, 1, 1, 0]]), tf.constant([[1, 1, 1, 1, 1, 0]])).numpy().tolist()
    [[0, 1, 2, 0, 1, 5]]
    """
    segment_ids, padding_mask = tf.cast(segment_ids, tf.int32), tf.cast(padding_mask, tf.int32)
    first_length = tf.reduce_sum((1 - segment_ids) * padding_mask, axis=-1, keepdims=True)
    plain = tf.broadcast_to(tf.range(tf.shape(segment_ids)[-1]), tf.shape(segment_ids))
    return plain - segment_ids * padding_mask * first_length


def pack_translation_pairs(
    first: tf.RaggedTensor,
    second: tf.RaggedTensor,
    *,
    sequence_length: int,
    start_id: int,
    separator_id: int,
    pad_id: int,
    language_ids: tuple[int, int],
) -> dict[str, tf.Tensor]:
    """Ragged `[batch, None]` token ids of both sides -> TLM inputs `[batch, sequence_length]`.

    Layout `start a sep sep b sep`; both sides are trimmed round-robin from the end to fit.
    """
    first, second = tf.cast(first, tf.int32), tf.cast(second, tf.int32)
    first, second = tf_text.RoundRobinTrimmer(sequence_length - 4).trim([first, second])
    marker = tf.RaggedTensor.from_tensor(tf.fill([second.nrows(), 1], tf.constant(separator_id, tf.int32)))
    second = tf.concat([marker, second], axis=1)
    token_ids, segment_ids = tf_text.combine_segments(
        [first, second], start_of_sequence_id=start_id, end_of_segment_id=separator_id)
    token_ids, padding_mask = tf_text.pad_model_inputs(token_ids, sequence_length, pad_value=pad_id)
    segment_ids, _ = tf_text.pad_model_inputs(segment_ids, sequence_length, pad_value=0)
    token_ids, segment_ids, padding_mask = (tf.cast(t, tf.int32) for t in (token_ids, segment_ids, padding_mask))
    return {
        "token_ids": token_ids,
        "segment_ids": segment_ids,
        "padding_mask": padding_mask,
        "language_ids": tf.where(segment_ids > 0, language_ids[1], language_ids[0]),
        "position_ids": tlm_position_ids(segment_ids, padding_mask),
    }


def tlm_dataset(
    pairs: tf.data.Dataset,
    tokenizer,
    *,
    masker: MaskedLMMasker,
    sequence_length: int,
    batch_size: int,
    language_ids: tuple[int, int] = (0, 1),
    seed: int | None = None,
    shuffle_buffer: int | None = None,
) -> tf.data.Dataset:
    """`(first, second)` string pairs -> masked TLM batches (dicts, `drop_remainder=True`).

    `tokenizer` is a `tfbert.text` tokenizer (`tokenize`, `cls_id`, `sep_id`, `pad_id`).
    Masked outputs are the masker's: `masked_positions`, `masked_ids`, `masked_weights`.
    """
    if shuffle_buffer:
        pairs = pairs.shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)

    def pack(first, second):
        def ids(text):
            tokens = tokenizer.tokenize(text)
            return tokens.merge_dims(1, 2) if tokens.shape.rank == 3 else tokens
        packed = pack_translation_pairs(
            ids(first), ids(second), sequence_length=sequence_length, start_id=tokenizer.cls_id,
            separator_id=tokenizer.sep_id, pad_id=tokenizer.pad_id, language_ids=language_ids)
        return {name: tf.ensure_shape(value, [batch_size, sequence_length]) for name, value in packed.items()}

    batches = pairs.batch(batch_size, drop_remainder=True).map(pack, num_parallel_calls=tf.data.AUTOTUNE,
                                                               deterministic=True)
    return mask_dataset(batches, masker, seed=seed)


def split_xlm_batch(batch: dict[str, tf.Tensor], objective: str = "mlm") -> tuple[dict, dict] | dict:
    """A batch as `XLMPretrainingModel`'s `(inputs, labels)` (`"mlm"`, also for TLM) or inputs (`"clm"`)."""
    inputs = {name: batch[name] for name in MODEL_INPUTS}
    if objective == "clm":
        return inputs
    inputs["masked_positions"] = batch["masked_positions"]
    return inputs, {"masked_ids": batch["masked_ids"], "masked_weights": batch["masked_weights"]}
