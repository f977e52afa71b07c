"""Stream documents from text files, TFRecord files or TensorFlow Datasets.

Every reader returns a `tf.data.Dataset` whose elements are documents: 1-D
`tf.string` tensors holding one sentence per entry, stripped, never empty.
Nothing reads a whole corpus into memory; a document is held only while it is
being assembled, and `max_document_sentences` bounds even that.
"""

from __future__ import annotations

import os
from typing import Literal, Sequence

import tensorflow as tf

SentenceSplit = Literal["newline", "punctuation"]

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
    max_document_sentences: int = 100_000,
) -> tf.data.Dataset:
    """Documents from UTF-8 text files, read line by line.

    Default layout (BERT's): one sentence per line, a blank (or
    whitespace-only) line between documents; a file's end also ends a
    document. With `one_document_per_line=True` every line is a document,
    split into sentences by `sentence_split`. A document longer than
    `max_document_sentences` is cut into several.

    >>> docs = text_line_documents(["wiki_00.txt", "wiki_01.txt"])
    >>> next(iter(docs))   # tf.Tensor([b'First sentence.', b'Second one.'], shape=(2,))  # doctest: +SKIP
    """
    file_names = tf.data.Dataset.from_tensor_slices(tf.constant(_as_list(files), tf.string))
    if one_document_per_line:
        lines = file_names.flat_map(tf.data.TextLineDataset)
        documents = lines.map(lambda line: split_sentences(line, sentence_split))
        return documents.filter(lambda document: tf.size(document) > 0)
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
) -> tf.data.Dataset:
    """Documents from TFRecord files whose records are raw UTF-8 document strings.

    >>> docs = tfrecord_documents("corpus-*.tfrecord", sentence_split="punctuation")
    """
    records = tf.data.TFRecordDataset(_as_list(files), compression_type=compression_type)
    documents = records.map(lambda record: split_sentences(record, sentence_split))
    return documents.filter(lambda document: tf.size(document) > 0)


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
    return documents.filter(lambda document: tf.size(document) > 0)


def utf8_replaced_documents(patterns: Sequence[str]) -> tf.data.Dataset:
    """`text_line_documents` of the files (or glob patterns), every byte sequence that is not UTF-8 replaced
    by U+FFFD (`--encoding-errors replace`).

    >>> documents = utf8_replaced_documents(["latin1.txt"])
    """
    files = [match for pattern in patterns for match in (sorted(tf.io.gfile.glob(pattern)) or [pattern])]
    return text_line_documents(files).map(lambda document: tf.strings.unicode_transcode(
        document, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD))


def _group_lines_into_documents(lines: tf.data.Dataset, max_document_sentences: int) -> tf.data.Dataset:
    """Sentence lines -> documents, ending one at each blank line (a streaming `scan`).

    The scan's state is the current document's sentences so far; it emits the
    document when a blank line arrives or the document reaches the cap.
    """

    def step(sentences, line):
        line = tf.strings.strip(line)
        blank = tf.equal(tf.strings.length(line), 0)
        grown = tf.cond(blank, lambda: sentences, lambda: tf.concat([sentences, line[tf.newaxis]], 0))
        complete = blank | (tf.size(grown) >= max_document_sentences)
        next_state = tf.cond(complete, lambda: tf.zeros([0], tf.string), lambda: grown)
        return next_state, (grown, complete)

    grouped = lines.scan(tf.zeros([0], tf.string), step)
    grouped = grouped.filter(lambda document, complete: complete & (tf.size(document) > 0))
    return grouped.map(lambda document, complete: document)


def _as_list(files: str | os.PathLike | Sequence[str | os.PathLike]) -> list[str]:
    """File names from one name, a glob pattern or a list of names."""
    if isinstance(files, (str, os.PathLike)):
        files = os.fspath(files)
        return sorted(tf.io.gfile.glob(files)) or [files]
    return [str(name) for name in files]
