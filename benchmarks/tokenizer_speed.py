"""Tokenization throughput: tfbert tokenizers beside Hugging Face `tokenizers`, the reference
libraries (sentencepiece, tiktoken) and keras-hub's tokenizers of the same vocabularies.

Same text, same batches, same process. TF tokenizers run in a `tf.function` over pre-built
string batches; every contender gets one warm-up pass over all batches (this fills the BPE
caches), then the best of `--repeats` timed passes is reported. "ids" says whether a contender's
ids equal the reference's on every line.

    python benchmarks/tokenizer_speed.py                 # Wikipedia sample + Botchan, ~6 MB
    python benchmarks/tokenizer_speed.py --batch-sizes 256 1024 4096 --repeats 3
    python benchmarks/tokenizer_speed.py --only Byte --latency 300   # plus single-string latency
    python benchmarks/tokenizer_speed.py --shards 1 2 4 --batch-sizes 256 1024 4096  # tfbert, a batch over the cores
    python benchmarks/tokenizer_speed.py --eager --batch-sizes 64 256   # tfbert called eagerly, batch after batch

Beside MB/s (wall clock) each row gives MB per CPU-second of this process (steadier on a shared
machine; Python peers with threads use more than one core). `--latency N` adds a table of
batch-1 latency: N single strings (every k-th corpus line), each a batch of one, contenders
taking turns string by string; median and p99 in milliseconds. The measuring code (the
contenders, the timing) is `benchmarks.lab.tokenization`; `python -m benchmarks tokenize` runs it
too and records the result. `--shards` measures instead tfbert's tokenizers with each batch cut
into that many shards (`Tokenizer.shards`, run side by side on the cores), alternating in one process.
`--eager` measures instead tfbert's tokenizers called eagerly, batch after batch, keeping their traced shard
function beside tracing a fresh one on every call (CPU milliseconds per call).
"""

from __future__ import annotations

import os
import sys

# The checkout, where `benchmarks.lab` (the measuring code) lives.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from benchmarks.lab import tokenization  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1024])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", help="run only families whose name contains this")
    parser.add_argument("--latency", type=int, default=0, metavar="N", help="also time N single strings (batch 1)")
    parser.add_argument("--shards", type=int, nargs="+", metavar="K",
                        help="instead: tfbert's tokenizers with each batch cut into K shards, for each K")
    parser.add_argument("--eager", action="store_true",
                        help="instead: tfbert's tokenizers called eagerly, kept traced function vs a fresh trace a call")
    args = parser.parse_args()
    if args.eager:
        print(tokenization.measure_eager(tokenization.corpus()[:2048], args.batch_sizes, args.repeats,
                                         args.only).markdown())
        return
    if args.shards:
        print(tokenization.measure_shards(tokenization.corpus(), args.batch_sizes, args.repeats, args.shards,
                                          args.only).markdown())
        return
    tables = tokenization.measure(tokenization.corpus(), args.batch_sizes, args.repeats, args.only, args.latency)
    print("\n\n".join(table.markdown() for table in tables))


if __name__ == "__main__":
    main()
