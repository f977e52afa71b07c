"""A small real English corpus shipped with tfbert: the World English Bible (public domain).

`web.txt.gz` holds the 66 protocanonical books of the World English Bible (eBible.org), a
chapter per document (1,189), a sentence a line (42,217), a blank line between documents:
3.9 MB of text, 1.2 MB gzip-compressed. `build.py` regenerates it from Debian's
`sword-text-web`; `ATTRIBUTION.md` gives the source and terms.

Example:
    >>> import tfbert.corpus
    >>> tfbert.corpus.path().name
    'web.txt.gz'
    >>> docs = tfbert.corpus.documents()           # tf.data.Dataset of 1-D string tensors
    >>> next(iter(docs))[:2].numpy().tolist()
    [b'In the beginning, God created the heavens and the earth.', b'The earth was formless and empty.']
    >>> sentences = list(tfbert.corpus.lines())    # plain Python strings, blank lines skipped
    >>> train, held_out = tfbert.corpus.write_held_out_split(tfbert.corpus.chapters(), "data/")
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Iterator, Sequence

import tensorflow as tf

from tfbert.data.readers import DOCUMENT_WINDOW, _group_lines_into_documents

NAMES = ("web",)


def path(name: str = "web") -> Path:
    """Path of a bundled corpus file (gzip-compressed text)."""
    if name not in NAMES:
        raise ValueError(f"unknown bundled corpus {name!r}; bundled: {', '.join(NAMES)}")
    return Path(__file__).with_name(f"{name}.txt.gz")


def documents(
    files: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
    *,
    max_document_sentences: int = DOCUMENT_WINDOW,
) -> tf.data.Dataset:
    """Documents (1-D string tensors of sentences) from gzip-compressed sentence-a-line files.

    Default: the bundled corpus. Same layout and output as `tfbert.data.text_line_documents`,
    for `.gz` files: a sentence a line, a blank line between documents.
    """
    names = [str(path())] if files is None else [os.fspath(files)] if isinstance(files, (str, os.PathLike)) else [os.fspath(f) for f in files]
    file_names = tf.data.Dataset.from_tensor_slices(tf.constant(names, tf.string))
    lines = file_names.flat_map(
        lambda name: tf.data.TextLineDataset(name, compression_type="GZIP").concatenate(
            tf.data.Dataset.from_tensors(tf.constant("")))
    )
    return _group_lines_into_documents(lines, max_document_sentences)


def lines(name: str = "web") -> Iterator[str]:
    """The non-empty lines (sentences) of a bundled corpus as Python strings."""
    with gzip.open(path(name), "rt", encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line:
                yield line


def chapters(name: str = "web") -> list[list[str]]:
    """The documents of a bundled corpus (chapters of the Bible) as Python lists of sentences."""
    documents: list[list[str]] = []
    current: list[str] = []
    with gzip.open(path(name), "rt", encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line:
                current.append(line)
            elif current:
                documents.append(current)
                current = []
    if current:
        documents.append(current)
    return documents


def write_held_out_split(
    documents: Sequence[Sequence[str]],
    folder: str | os.PathLike,
    *,
    every: int = 10,
    held_out_index: int = 0,
) -> tuple[Path, Path]:
    """Writes `folder/train.txt` and `folder/held_out.txt` (a sentence a line, a blank line between documents).

    Document `i` is held out when `i % every == held_out_index`, so both parts span the whole corpus.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    train = [document for index, document in enumerate(documents) if index % every != held_out_index]
    held_out = [document for index, document in enumerate(documents) if index % every == held_out_index]
    paths = folder / "train.txt", folder / "held_out.txt"
    for destination, part in zip(paths, (train, held_out)):
        destination.write_text("\n\n".join("\n".join(document) for document in part) + "\n", encoding="utf-8")
    return paths


def write_text(destination: str | os.PathLike, name: str = "web") -> Path:
    """Writes the bundled corpus uncompressed (for tools that read plain text files)."""
    destination = Path(destination)
    with gzip.open(path(name), "rb") as source, open(destination, "wb") as target:
        target.write(source.read())
    return destination
