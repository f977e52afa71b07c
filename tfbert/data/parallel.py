"""Aligned parallel text as `tf.data`: two files with a sentence a line, or one TSV file.

Each element is a pair of string scalars `(source, target)`; pairs with an empty side are
dropped. Files are read line by line (never whole); an optional pre-pass counts the lines of
two-file corpora so that files of different lengths fail loudly instead of being truncated.

Example:
    >>> pairs = parallel_text_lines("kjv.en", "rv.es")          # or parallel_tsv("kjv-rv.tsv")
    >>> next(iter(pairs))
    (<tf.Tensor: shape=(), dtype=string, numpy=b'In the beginning God created the heaven and the earth.'>, <tf.Tensor: shape=(), dtype=string, numpy=b'EN el principio cri...'>)
"""

from __future__ import annotations

import os

import tensorflow as tf


def count_lines(path: str | os.PathLike) -> int:
    """Number of lines of a text file, read in 1 MiB chunks."""
    count = 0
    with tf.io.gfile.GFile(os.fspath(path), "rb") as handle:
        last = b"\n"
        while chunk := handle.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


def parallel_text_lines(
    source: str | os.PathLike,
    target: str | os.PathLike,
    *,
    check_lengths: bool = True,
    skip_empty: bool = True,
) -> tf.data.Dataset:
    """`(source line, target line)` pairs from two aligned files (line i of one translates line i of the other)."""
    source, target = os.fspath(source), os.fspath(target)
    for path in (source, target):
        if not tf.io.gfile.exists(path):
            raise FileNotFoundError(f"parallel text file {path!r} does not exist")
    if check_lengths:
        source_lines, target_lines = count_lines(source), count_lines(target)
        if source_lines != target_lines:
            raise ValueError(
                f"parallel files are not aligned: {source!r} has {source_lines} lines, {target!r} has {target_lines}"
            )
    pairs = tf.data.Dataset.zip(tf.data.TextLineDataset(source), tf.data.TextLineDataset(target))
    pairs = pairs.map(lambda a, b: (tf.strings.strip(a), tf.strings.strip(b)))
    return _drop_empty(pairs) if skip_empty else pairs


def parallel_tsv(path: str | os.PathLike, *, columns: tuple[int, int] = (0, 1), skip_empty: bool = True) -> tf.data.Dataset:
    """`(source, target)` pairs from the `columns` of a tab-separated file (a pair per line).

    A line with too few columns is an error (`InvalidArgumentError` when iterated).
    """
    path = os.fspath(path)
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(f"parallel text file {path!r} does not exist")
    needed = max(columns) + 1

    def split(line):
        fields = tf.strings.split(line, "\t")
        tf.debugging.assert_greater_equal(
            tf.size(fields), needed, message=f"a line of {path} has fewer than {needed} tab-separated columns")
        return tf.strings.strip(fields[columns[0]]), tf.strings.strip(fields[columns[1]])

    lines = tf.data.TextLineDataset(path).filter(lambda line: tf.strings.length(tf.strings.strip(line)) > 0)
    pairs = lines.map(split)
    return _drop_empty(pairs) if skip_empty else pairs


def _drop_empty(pairs: tf.data.Dataset) -> tf.data.Dataset:
    return pairs.filter(lambda a, b: (tf.strings.length(a) > 0) & (tf.strings.length(b) > 0))
