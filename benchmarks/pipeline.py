"""Masked-LM input pipeline throughput: tfbert.data beside keras-hub, same text, same run.

Both pipelines read the same real paragraphs (Wikipedia sample, Lee news documents, Botchan),
tokenize with the MiniLM uncased WordPiece vocabulary, pack to 128 tokens (`[CLS] text [SEP]`),
mask 15% (80/10/10, at most 20 predictions) and batch, all inside `tf.data` with the same
options. The measuring code is `benchmarks.lab.pipeline` (`python -m benchmarks pipeline`
runs it too and records the result).

    python benchmarks/pipeline.py [--batch-size 256] [--seconds 20]
"""

from __future__ import annotations

import os
import sys

# The checkout, where `benchmarks.lab` (the measuring code) lives.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from benchmarks.lab import pipeline  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(pipeline.measure(args.batch_size, args.seconds, args.rounds).markdown())


if __name__ == "__main__":
    main()
