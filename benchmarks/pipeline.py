"""Masked-LM input pipeline throughput: tfbert.data beside keras-hub, same text, same run.

Both pipelines read the same real paragraphs (Wikipedia sample, Lee news
documents, Botchan), tokenize with the MiniLM uncased WordPiece vocabulary,
pack to 128 tokens (`[CLS] text [SEP]`), mask 15% (80/10/10, at most 20
predictions) and batch, all inside `tf.data` with the same options.

    python benchmarks/pipeline.py [--batch-size 256] [--seconds 20]
"""

from __future__ import annotations

import sys

# Run as a script, this file's folder comes first on sys.path, where benchmarks/tokenize.py would
# shadow the standard library's `tokenize` module (which inspect and linecache import); drop it.
if sys.path and sys.path[0] and __file__.startswith(sys.path[0]):
    sys.path.pop(0)

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "data")]

import tensorflow as tf  # noqa: E402

from assets import asset  # noqa: E402
from text_fixtures import botchan_lines, wikipedia_articles  # noqa: E402

import tfbert.text  # noqa: E402
from tfbert.data.masking import MaskedLMMasker, mask_dataset  # noqa: E402
from tfbert.data.packing import SegmentPacker  # noqa: E402

SEQUENCE_LENGTH = 128
MAX_PREDICTIONS = 20


def paragraphs() -> list[str]:
    wiki = [p for article in wikipedia_articles(asset("text/enwiki-sample.xml.bz2")) for p in article.split("\n")]
    lee = [line.strip() for line in open(asset("text/lee_background.cor"), encoding="utf-8") if line.strip()]
    lines = botchan_lines(asset("text/botchan.txt"))
    botchan = [" ".join(lines[i:i + 6]) for i in range(0, len(lines), 6)]
    return wiki + lee + botchan


def tfbert_pipeline(texts: tf.data.Dataset, vocab_file: str, batch_size: int) -> tf.data.Dataset:
    tokenizer = tfbert.text.WordPieceTokenizer(vocab_file, lowercase=True)
    packer = SegmentPacker(SEQUENCE_LENGTH, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)
    masker = MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=MAX_PREDICTIONS)
    packed = texts.batch(batch_size, drop_remainder=True).map(
        lambda batch: packer([tokenizer.tokenize(batch)]), num_parallel_calls=tf.data.AUTOTUNE)
    return mask_dataset(packed, masker, seed=0)


def keras_hub_pipeline(texts: tf.data.Dataset, vocab_file: str, batch_size: int) -> tf.data.Dataset:
    import keras_hub

    vocabulary = Path(vocab_file).read_text(encoding="utf-8").splitlines()
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True)
    preprocessor = keras_hub.models.BertMaskedLMPreprocessor(
        tokenizer, sequence_length=SEQUENCE_LENGTH, mask_selection_rate=0.15,
        mask_selection_length=MAX_PREDICTIONS)
    return texts.batch(batch_size, drop_remainder=True).map(preprocessor, num_parallel_calls=tf.data.AUTOTUNE)


def examples_per_second(dataset: tf.data.Dataset, batch_size: int, seconds: float) -> float:
    iterator = iter(dataset.prefetch(tf.data.AUTOTUNE))
    for _ in range(5):
        next(iterator)
    batches, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        next(iterator)
        batches += 1
    return batches * batch_size / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    vocab_file = str(asset("minilm/vocab.txt"))
    texts = tf.data.Dataset.from_tensor_slices(paragraphs()).repeat()
    pipelines = {
        "tfbert.data (WordPieceTokenizer + SegmentPacker + MaskedLMMasker)": tfbert_pipeline,
        "keras-hub BertMaskedLMPreprocessor": keras_hub_pipeline,
    }
    cores = os.cpu_count()
    results = {name: [] for name in pipelines}
    for _ in range(args.rounds):
        for name, build in pipelines.items():
            results[name].append(examples_per_second(build(texts, vocab_file, args.batch_size),
                                                     args.batch_size, args.seconds))
    best = {name: max(values) for name, values in results.items()}
    baseline = best["keras-hub BertMaskedLMPreprocessor"]
    print(f"{cores} cores, batch {args.batch_size}, sequence length {SEQUENCE_LENGTH}, "
          f"best of {args.rounds} x {args.seconds:.0f} s")
    print("| pipeline | examples/s | examples/s per core | vs keras-hub |")
    print("| --- | ---: | ---: | ---: |")
    for name, value in best.items():
        print(f"| {name} | {value:,.0f} | {value / cores:,.0f} | {value / baseline:.2f}x |")


if __name__ == "__main__":
    main()
