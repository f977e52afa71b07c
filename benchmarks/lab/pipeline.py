"""Masked-LM input pipeline throughput: tfbert.data beside keras-hub, same text, same run.

Both pipelines read the same real paragraphs (Wikipedia sample, Lee news documents, Botchan),
tokenize with the MiniLM uncased WordPiece vocabulary, pack to 128 tokens (`[CLS] text [SEP]`),
mask 15% (80/10/10, at most 20 predictions) and batch, all inside `tf.data` with the same
options. The pipelines take turns, `rounds` times `seconds` each; the best round counts.

Example:
    >>> table = measure(batch_size=64, seconds=1.0, rounds=1)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from benchmarks.lab import peers
from benchmarks.lab.assets import asset, botchan_lines, wikipedia_articles
from benchmarks.lab.report import Table
from benchmarks.lab.timing import measure_alternately

SEQUENCE_LENGTH = 128
MAX_PREDICTIONS = 20
TFBERT = "tfbert.data (WordPieceTokenizer + SegmentPacker + MaskedLMMasker)"
KERAS_HUB = "keras-hub BertMaskedLMPreprocessor"


def paragraphs() -> list[str]:
    """The Wikipedia sample's paragraphs, the Lee news documents, Botchan in runs of six lines."""
    wiki = [p for article in wikipedia_articles(asset("text/enwiki-sample.xml.bz2")) for p in article.split("\n")]
    lee = [line.strip() for line in open(asset("text/lee_background.cor"), encoding="utf-8") if line.strip()]
    lines = botchan_lines(asset("text/botchan.txt"))
    botchan = [" ".join(lines[i:i + 6]) for i in range(0, len(lines), 6)]
    return wiki + lee + botchan


def tfbert_pipeline(texts, vocab_file: str, batch_size: int):
    """tfbert.data: WordPieceTokenizer, SegmentPacker and MaskedLMMasker over batches of `texts`."""
    import tensorflow as tf

    import tfbert.text
    from tfbert.data.masking import MaskedLMMasker, mask_dataset
    from tfbert.data.packing import SegmentPacker

    tokenizer = tfbert.text.WordPieceTokenizer(vocab_file, lowercase=True)
    packer = SegmentPacker(SEQUENCE_LENGTH, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id, style="bert")
    masker = MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=MAX_PREDICTIONS)
    packed = texts.batch(batch_size, drop_remainder=True).map(
        lambda batch: packer([tokenizer.tokenize(batch)]), num_parallel_calls=tf.data.AUTOTUNE)
    return mask_dataset(packed, masker, seed=0)


def keras_hub_pipeline(texts, vocab_file: str, batch_size: int):
    """keras-hub's BertMaskedLMPreprocessor over batches of `texts`."""
    import keras_hub
    import tensorflow as tf

    vocabulary = Path(vocab_file).read_text(encoding="utf-8").splitlines()
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True)
    preprocessor = keras_hub.models.BertMaskedLMPreprocessor(
        tokenizer, sequence_length=SEQUENCE_LENGTH, mask_selection_rate=0.15, mask_selection_length=MAX_PREDICTIONS)
    return texts.batch(batch_size, drop_remainder=True).map(preprocessor, num_parallel_calls=tf.data.AUTOTUNE)


def examples_per_second(dataset, batch_size: int, seconds: float) -> float:
    """Examples per second read from `dataset` (prefetched) for `seconds`, after 5 batches of warm-up."""
    import tensorflow as tf

    iterator = iter(dataset.prefetch(tf.data.AUTOTUNE))
    for _ in range(5):
        next(iterator)
    batches, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        next(iterator)
        batches += 1
    return batches * batch_size / (time.perf_counter() - start)


def measure(batch_size: int, seconds: float, rounds: int) -> Table:
    """The pipeline table: examples/s of each pipeline (keras-hub's only where installed), best of `rounds`."""
    import tensorflow as tf

    vocab_file = str(asset("minilm/vocab.txt"))
    texts = tf.data.Dataset.from_tensor_slices(paragraphs()).repeat()
    builders = {TFBERT: tfbert_pipeline}
    absent = peers.missing(["keras-hub"])
    if not absent:
        builders[KERAS_HUB] = keras_hub_pipeline
    rates = measure_alternately(
        {name: (lambda build=build: examples_per_second(build(texts, vocab_file, batch_size), batch_size, seconds))
         for name, build in builders.items()}, rounds)
    best = {name: max(values) for name, values in rates.items()}
    cores = os.cpu_count() or 1
    baseline = best.get(KERAS_HUB)
    table = Table("Pretraining input pipeline", ["pipeline", "examples/s", "examples/s per core", "vs keras-hub"], [],
                  setup=[f"{cores} cores, batch {batch_size}, sequence length {SEQUENCE_LENGTH}, "
                         f"best of {rounds} x {seconds:.0f} s"],
                  notes=[peers.skipped_note(peer) for peer in absent])
    for name, value in best.items():
        ratio = f"{value / baseline:.2f}x" if baseline else "-"
        table.rows.append([name, f"{value:,.0f}", f"{value / cores:,.0f}", ratio])
    return table
