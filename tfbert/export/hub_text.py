"""TF Hub's "Common SavedModel APIs for Text" on top of tfbert's `Preprocessor`.

The TF Hub BERT tutorials use a preprocessor SavedModel with three entry points and an
encoder SavedModel that is callable and reusable (trainable under `hub.KerasLayer`):

- `preprocessor(strings)` -> `input_word_ids`, `input_mask`, `input_type_ids`;
- `preprocessor.tokenize(strings)` -> a `tf.RaggedTensor` of ids: `[batch, words, pieces]` for
  WordPiece (as TF Hub's BERT preprocessors), `[batch, pieces]` for SentencePiece and byte-level BPE;
  inside a saved model fed one string instead of a batch (the GLUE tutorial's
  `serving_default(**example)`), both read it as a batch of one (`string_batch`);
- `preprocessor.bert_pack_inputs(segments, seq_length=N)` -> the three tensors, segments
  truncated round-robin to `N` and packed in the architecture's layout (`SegmentPacker`);
- `encoder(inputs, training=False)` -> `pooled_output`, `sequence_output`, `encoder_outputs`,
  `default_output`.

Example:
    >>> preprocess = hub.KerasLayer("saved_models/minilm_preprocess/1")   # from tfbert export --hub-pair; tensorflow_hub  # doctest: +SKIP
    >>> preprocess(tf.constant(["hello"]))["input_word_ids"].shape  # doctest: +SKIP
    TensorShape([1, 128])
"""

from __future__ import annotations

from typing import Sequence

import tensorflow as tf

from tfbert.data.packing import SegmentPacker
from tfbert.data.preprocessor import Preprocessor
from tfbert.export.preprocessing import to_hub_names
from tfbert.text.wordpiece_tokenizer import WordPieceTokenizer

WORDPIECE_CONTINUATION = "##"
MAX_HUB_SEGMENTS = 3


def continuation_table(tokenizer: WordPieceTokenizer) -> tf.Tensor:
    """`[vocabulary_size]` bool: True where a WordPiece token continues a word (`##ing`)."""
    return tf.constant([token.startswith(WORDPIECE_CONTINUATION) for token in tokenizer.vocabulary()])


def group_pieces_into_words(ids: tf.RaggedTensor, continues_word: tf.Tensor) -> tf.RaggedTensor:
    """`[batch, pieces]` WordPiece ids to `[batch, words, pieces]`: a word starts at every piece that is
    not a `##` continuation (and at each row's first piece).

    tfbert's WordPiece tokenizer returns flat pieces (its fast path has no word boundaries), so the
    word level TF Hub's `tokenize` exposes is rebuilt from the vocabulary here.
    """
    flat = ids.flat_values
    row_starts = tf.range(tf.size(flat, out_type=tf.int64)) == tf.gather(ids.row_starts(), ids.value_rowids())
    starts_word = tf.logical_or(~tf.gather(continues_word, flat), row_starts)
    word_starts = tf.where(starts_word)[:, 0]
    words = tf.RaggedTensor.from_row_starts(flat, word_starts, validate=False)
    words_per_row = tf.math.segment_sum(tf.cast(starts_word, tf.int64), ids.value_rowids())
    words_per_row = tf.concat([words_per_row, tf.zeros([ids.nrows() - tf.size(words_per_row, out_type=tf.int64)],
                                                       tf.int64)], 0)
    return tf.RaggedTensor.from_row_lengths(words, words_per_row, validate=False)


def string_batch(text: tf.Tensor) -> tf.Tensor:
    """`[batch]` strings as they are, one string (a scalar) as a batch of one; 2-D and more fail naming the shape.

    The entry points are traced for `[batch]`, so TensorFlow refuses a scalar in a direct call before
    this runs. But a model that embeds them and is saved (`tf.keras.Model(text_input, ...).save`) hands
    them whatever its own signature is fed, unchecked: the GLUE tutorial calls that `serving_default`
    with one example's strings and reads a `[1, classes]` result. The serving signatures (`preprocess`,
    `tokenize`) still refuse a scalar, as every serving input does.
    """
    # Grappler knows the traced rank (1), so it folds tf.rank / tf.size(tf.shape(text)) to 1 and drops
    # tf.reshape(text, [-1]) as a no-op: the rank is counted from the shape's values, and the string
    # goes through a [1, batch] matrix, which grappler keeps (TF 2.21; the hub tests would catch a change).
    shape = tf.shape(text)
    rank = tf.math.count_nonzero(shape + 1)
    at_most_one = tf.debugging.Assert(rank <= 1, ["text must be [batch] strings or one string; got shape", shape])
    with tf.control_dependencies([at_most_one]):
        return tf.reshape(text, [1, -1])[0]


class HubText:
    """The text entry points of the TF Hub API for one `Preprocessor` (see the module notes).

    Example:
        >>> from tfbert.finetuning.pretrained import load_pretrained_preprocessor
        >>> hub_text = HubText(load_pretrained_preprocessor("all-MiniLM-L6-v2/"))
        >>> hub_text.bert_pack_inputs([hub_text.tokenize(tf.constant(["a b"]))], seq_length=8)["input_mask"]
        <tf.Tensor: shape=(1, 8), dtype=int32, numpy=array([[1, 1, 1, 1, 0, 0, 0, 0]], dtype=int32)>
    """

    def __init__(self, preprocessor: Preprocessor):
        self.preprocessor = preprocessor
        tokenizer = preprocessor.tokenizer
        self.words = isinstance(tokenizer, WordPieceTokenizer)
        self._continues_word = continuation_table(tokenizer) if self.words else None

    def call(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        return to_hub_names(self.preprocessor.pack(string_batch(text)))

    def tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
        """Ids of `text` after the preprocessor's `clean` (invalid UTF-8 replaced, a megabyte string cut),
        so `bert_pack_inputs` on them equals the `preprocess` signature on the same strings."""
        ids = self.preprocessor.tokenizer.tokenize(self.preprocessor.clean(string_batch(text)))
        return group_pieces_into_words(ids, self._continues_word) if self.words else ids

    def bert_pack_inputs(self, segments: Sequence[tf.RaggedTensor], seq_length=None) -> dict[str, tf.Tensor]:
        """Round-robin truncation to `seq_length` (the export's sequence length by default), then the
        architecture's packing; a `seq_length` without room for one token per segment is an error."""
        own = self.preprocessor.packer
        length = own.sequence_length if seq_length is None else seq_length
        packer = SegmentPacker(length, own.cls_id, own.sep_id, own.pad_id, style=own.style, truncation="round_robin")
        return to_hub_names(packer(list(segments)))

    def segment_specs(self) -> list[list[tf.RaggedTensorSpec]]:
        """The segment lists `bert_pack_inputs` is traced for: 1..3 segments shaped as `tokenize` returns
        them (each trace is saved, so only those)."""
        rank = 2 if self.words else 1
        spec = tf.RaggedTensorSpec([None] * (rank + 1), tf.int32, ragged_rank=rank)
        return [[spec] * count for count in range(1, MAX_HUB_SEGMENTS + 1)]
