"""Stream documents from text files, TFRecord files or TensorFlow Datasets.

Every reader returns a `tf.data.Dataset` whose elements are documents: 1-D
`tf.string` tensors holding one sentence per entry, stripped, never empty.
Nothing reads a whole corpus or a whole document into memory: documents longer
than `max_document_sentences` (`DOCUMENT_WINDOW`) are cut into windows of that
many sentences as they stream, in time linear in the corpus.
"""

from __future__ import annotations

import os
from typing import Literal, Sequence

import tensorflow as tf

SentenceSplit = Literal["newline", "punctuation"]

# Sentences per document window: longer documents are cut as they stream (a window is the
# largest unit any later step or shuffle buffer holds). Long enough that ordinary documents
# (news stories, encyclopedia articles) stay whole.
DOCUMENT_WINDOW = 256

# End of a sentence: terminal punctuation, optional closing quotes/brackets,
# then whitespace. RE2 has no look-behind, so the match is re-emitted with a
# newline and the text is then split on newlines.
_SENTENCE_END = r"""([.!?]+["'\x{201D}\x{2019})\]]*)\s+"""


def split_sentences(text: tf.Tensor, mode: SentenceSplit = "punctuation") -> tf.Tensor:
    """Split one document string into a 1-D tensor of non-empty, stripped sentences.

    "newline" splits on line breaks only; "punctuation" also splits after
    `.`, `!` or `?` followed by whitespace (a heuristic: "Mr. Smith" splits).

    >>> split_sentences(tf.constant("It rained. We stayed in!  Then? ok")).numpy().tolist()
    [b'It rained.', b'We stayed in!', b'Then?', b'ok']
    """
    if mode == "punctuation":
        text = tf.strings.regex_replace(text, _SENTENCE_END, "\\1\n")
    elif mode != "newline":
        raise ValueError(f"unknown sentence split {mode!r}; use 'newline' or 'punctuation'")
    sentences = tf.strings.strip(tf.strings.split(text, "\n"))
    return tf.boolean_mask(sentences, tf.strings.length(sentences) > 0)


def text_line_documents(
    files: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    one_document_per_line: bool = False,
    sentence_split: SentenceSplit = "punctuation",
    max_document_sentences: int = DOCUMENT_WINDOW,
) -> tf.data.Dataset:
    """Documents from UTF-8 text files, read line by line.

    Default layout (BERT's): one sentence per line, a blank (or
    whitespace-only) line between documents; a file's end also ends a
    document. With `one_document_per_line=True` every line is a document,
    split into sentences by `sentence_split`. A document longer than
    `max_document_sentences` is cut into windows of that many sentences.

    >>> from pathlib import Path
    >>> _ = Path("wiki_00.txt").write_text("First sentence.\\nSecond one.\\n\\nNext document.\\n", encoding="utf-8")
    >>> _ = Path("wiki_01.txt").write_text("Another file.\\n", encoding="utf-8")
    >>> docs = text_line_documents(["wiki_00.txt", "wiki_01.txt"])
    >>> for document in docs:
    ...     print(" | ".join(sentence.decode("utf-8") for sentence in document.numpy()))
    First sentence. | Second one.
    Next document.
    Another file.
    """
    file_names = tf.data.Dataset.from_tensor_slices(tf.constant(_as_list(files), tf.string))
    if one_document_per_line:
        lines = file_names.flat_map(tf.data.TextLineDataset)
        documents = lines.map(lambda line: split_sentences(line, sentence_split))
        return windowed_documents(documents, max_document_sentences)
    # An empty line after every file closes the file's last document.
    lines = file_names.flat_map(
        lambda name: tf.data.TextLineDataset(name).concatenate(tf.data.Dataset.from_tensors(tf.constant("")))
    )
    return _group_lines_into_documents(lines, max_document_sentences)


def tfrecord_documents(
    files: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    sentence_split: SentenceSplit = "newline",
    compression_type: str | None = None,
    max_document_sentences: int = DOCUMENT_WINDOW,
) -> tf.data.Dataset:
    """Documents from TFRecord files whose records are raw UTF-8 document strings, in windows of at most
    `max_document_sentences` sentences.

    >>> docs = tfrecord_documents("corpus-*.tfrecord", sentence_split="punctuation")
    >>> tuple(next(iter(docs)).shape)            # a window of at most 256 sentences
    (256,)
    """
    records = tf.data.TFRecordDataset(_as_list(files), compression_type=compression_type)
    documents = records.map(lambda record: split_sentences(record, sentence_split))
    return windowed_documents(documents, max_document_sentences)


def text_lines(files: str | os.PathLike | Sequence[str | os.PathLike]) -> tf.data.Dataset:
    """The stripped, non-blank lines of UTF-8 text files (`.gz` files read as gzip), in order.

    The input of `--line-by-line` pretraining (`tfbert.data.line_by_line_dataset`): each line an example.

    >>> import gzip
    >>> from pathlib import Path
    >>> _ = Path("a.txt").write_text("  one\\n\\ntwo\\n", encoding="utf-8")
    >>> _ = Path("b.txt.gz").write_bytes(gzip.compress("three\\n".encode("utf-8")))
    >>> print(" ".join(line.numpy().decode("utf-8") for line in text_lines(["a.txt", "b.txt.gz"])))
    one two three
    """
    file_names = tf.data.Dataset.from_tensor_slices(tf.constant(_as_list(files), tf.string))
    lines = file_names.flat_map(lambda name: tf.data.TextLineDataset(
        name, compression_type=tf.where(tf.strings.regex_full_match(name, r".*\.gz"), "GZIP", "")))
    return lines.map(tf.strings.strip).filter(lambda line: tf.strings.length(line) > 0)


def tfds_documents(
    name: str,
    *,
    split: str = "train",
    feature: str = "text",
    sentence_split: SentenceSplit = "newline",
    data_dir: str | None = None,
    **load_kwargs,
) -> tf.data.Dataset:
    """Documents from the text feature `feature` of a TensorFlow Datasets dataset.

    >>> docs = tfds_documents("wikipedia/20230601.en", feature="text")  # doctest: +SKIP
    """
    import tensorflow_datasets as tfds

    try:
        examples = tfds.load(name, split=split, data_dir=data_dir, **load_kwargs)
    except tfds.core.registered.DatasetNotFoundError:
        # TFDS's own message lists every registered dataset (thousands of words).
        raise ValueError(f"TensorFlow Datasets has no dataset {name!r}; tfds.list_builders() lists them") from None
    except (OSError, ImportError) as error:  # no network (requests' errors are OSErrors), a missing module
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise OSError(f"cannot load {name!r} from TensorFlow Datasets ({type(error).__name__}: {reason}); it "
                      "downloads the data on first use, which needs the internet") from None
    documents = examples.map(lambda example: split_sentences(example[feature], sentence_split))
    return windowed_documents(documents, DOCUMENT_WINDOW)


def utf8_replaced_documents(patterns: Sequence[str]) -> tf.data.Dataset:
    """`text_line_documents` of the files (or glob patterns), every byte sequence that is not UTF-8 replaced
    by U+FFFD (`--encoding-errors replace`).

    >>> documents = utf8_replaced_documents(["latin1.txt"])
    >>> next(iter(documents)).numpy()[-1].decode()
    'caf\ufffd au lait'
    """
    files = [match for pattern in patterns for match in (sorted(tf.io.gfile.glob(pattern)) or [pattern])]
    return text_line_documents(files).map(lambda document: tf.strings.unicode_transcode(
        document, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD))


def utf8_replaced_lines(patterns: Sequence[str]) -> tf.data.Dataset:
    """`text_lines` of the files (or glob patterns), every byte sequence that is not UTF-8 replaced by U+FFFD
    (`--line-by-line --encoding-errors replace`).

    >>> from pathlib import Path
    >>> _ = Path("latin1.txt").write_bytes("café\\n".encode("latin-1"))
    >>> print(" ".join(line.numpy().decode("utf-8") for line in utf8_replaced_lines(["latin1.txt"])))
    caf\ufffd
    """
    files = [match for pattern in patterns for match in (sorted(tf.io.gfile.glob(pattern)) or [pattern])]
    return text_lines(files).map(lambda line: tf.strings.unicode_transcode(
        line, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD))


def _group_lines_into_documents(lines: tf.data.Dataset, max_document_sentences: int) -> tf.data.Dataset:
    """Sentence lines -> documents, one ending at each blank line, cut into windows of `max_document_sentences`.

    Lines are read in blocks of `max_document_sentences`; a `scan` carries the open document's
    unfinished window (fewer lines than a window) into the next block. Each line is copied at most
    twice, so the cost is linear in the corpus whatever the documents' lengths, and at most two
    windows are held.
    """
    window = int(max_document_sentences)
    if window < 1:
        raise ValueError(f"max_document_sentences must be at least 1, got {max_document_sentences}")

    def step(carry, block):
        text = tf.concat([carry, tf.strings.strip(block)], 0)
        blank = tf.equal(tf.strings.length(text), 0)
        run_ids = tf.cumsum(tf.cast(blank, tf.int64))   # blank lines before each line: its document
        sentences = tf.boolean_mask(text, ~blank)
        runs = tf.RaggedTensor.from_value_rowids(
            sentences, tf.boolean_mask(run_ids, ~blank), nrows=tf.reduce_sum(tf.cast(blank, tf.int64)) + 1)
        open_length = runs.row_lengths()[-1]
        kept = tf.cast(open_length % window, tf.int32)   # the open document's unfinished window
        emitted = tf.size(sentences) - kept
        closed = tf.RaggedTensor.from_row_lengths(
            sentences[:emitted], tf.concat([runs.row_lengths()[:-1], [open_length - tf.cast(kept, tf.int64)]], 0))
        return sentences[emitted:], cut_rows(closed, window)

    windows = lines.batch(window).scan(tf.zeros([0], tf.string), step)
    # A file's end is a blank line (see text_line_documents), so nothing is left in the carry at the end.
    return _one_per_element(windows)


def windowed_documents(documents: tf.data.Dataset, max_document_sentences: int) -> tf.data.Dataset:
    """Documents cut into consecutive windows of at most `max_document_sentences` sentences; empty ones dropped.

    >>> windows = windowed_documents(tf.data.Dataset.from_tensors(tf.constant(["a", "b", "c"])), 2)
    >>> " | ".join(" ".join(part.decode() for part in window) for window in windows.as_numpy_iterator())
    'a b | c'
    """
    def windows(document):
        return cut_rows(tf.RaggedTensor.from_row_lengths(document, tf.shape(document, tf.int64)[:1]),
                        max_document_sentences)

    return _one_per_element(documents.map(windows))


def _one_per_element(windows: tf.data.Dataset) -> tf.data.Dataset:
    """A dataset of ragged `[windows, sentences]` batches -> one 1-D string tensor per window."""

    def as_tensor(window):
        return tf.identity(window)   # unbatch gives ragged-rank-0 specs; documents are plain tensors

    return windows.unbatch().map(as_tensor)


def cut_rows(rows: tf.RaggedTensor, max_length: int) -> tf.RaggedTensor:
    """Cut each row into consecutive pieces of at most `max_length` values; drop empty rows.

    >>> cut_rows(tf.ragged.constant([[1, 2, 3, 4, 5], [], [6]]), 2).to_list()
    [[1, 2], [3, 4], [5], [6]]
    """
    position_in_row = tf.ragged.range(rows.row_lengths()).flat_values
    piece_starts = tf.equal(position_in_row % max_length, 0)
    piece_ids = tf.cumsum(tf.cast(piece_starts, tf.int64)) - 1
    return tf.RaggedTensor.from_value_rowids(
        rows.flat_values, piece_ids, nrows=tf.reduce_sum(tf.cast(piece_starts, tf.int64)))


def _as_list(files: str | os.PathLike | Sequence[str | os.PathLike]) -> list[str]:
    """File names from one name, a glob pattern or a list of names."""
    if isinstance(files, (str, os.PathLike)):
        files = os.fspath(files)
        return sorted(tf.io.gfile.glob(files)) or [files]
    return [str(name) for name in files]
