"""Korean vocabularies trained on raw text and on mecab morphemes (`tfbert vocab --pre-tokenize mecab`),
measured on held-out raw text as models see it (tokenization stays in the graph on raw text).

Corpus: the Korean test assets (the constitution and the kobill bills of konlpy 0.6.0); every 10th
line is held out. For each tokenizer kind and vocabulary size, prints the unknown-piece rate, pieces
per whitespace word and coverage (words that are one known piece) that `tfbert vocab stats` prints.

    python tests/assets.py && python benchmarks/korean_vocab.py [--sizes 600 1000] [--wordpiece-sizes 1500 2000]
"""

from __future__ import annotations

import sys


import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from assets import asset  # noqa: E402

from tfbert.text import morphemes, vocab_training  # noqa: E402
from tfbert.text.vocab_stats import vocabulary_stats  # noqa: E402

KINDS = {
    "sentencepiece": lambda data, size, out: vocab_training.train_sentencepiece(data, size, out),
    "wordpiece": lambda data, size, out: vocab_training.train_wordpiece(data, size, out),
}


def korean_lines() -> list[str]:
    paths = [asset("text/ko/constitution.txt")] + sorted(asset("text/ko/kobill").glob("*.txt"))
    return [line for path in paths for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[600, 1000], help="SentencePiece sizes")
    parser.add_argument("--wordpiece-sizes", type=int, nargs="+", default=[1500, 2000],
                        help="WordPiece sizes (each Korean syllable takes two tokens, with and without ##)")
    args = parser.parse_args()
    lines = korean_lines()
    train = [line for index, line in enumerate(lines) if index % 10]
    held_out = [line for index, line in enumerate(lines) if index % 10 == 0]
    split = morphemes.mecab_splitter()
    print(f"{len(train):,} training lines, {len(held_out):,} held-out lines "
          f"({sum(len(line.split()) for line in held_out):,} words)\n")
    print("| tokenizer | training text | tokens | unknown pieces | pieces per word | coverage | trained in |")
    print("|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        raw = Path(work) / "raw.txt"
        raw.write_text("\n".join(train) + "\n", encoding="utf-8")
        start = time.perf_counter()
        mecab = morphemes.pre_tokenize_lines(train, Path(work) / "mecab.txt", split)
        split_seconds = time.perf_counter() - start
        for kind, trainer in KINDS.items():
            for size in args.sizes if kind == "sentencepiece" else args.wordpiece_sizes:
                for name, data in (("raw", raw), ("mecab morphemes", mecab)):
                    start = time.perf_counter()
                    try:
                        tokenizer = trainer(str(data), size, Path(work) / f"{kind}_{size}_{data.stem}")
                    except ValueError as error:
                        print(f"| {kind} | {name} | {size:,} | {error} | | | |")
                        continue
                    seconds = time.perf_counter() - start
                    stats = vocabulary_stats(tokenizer, held_out)
                    print(f"| {kind} | {name} | {tokenizer.vocabulary_size():,} | {stats.unknown_rate:.2%} | "
                          f"{stats.pieces_per_word:.2f} | {stats.coverage:.1%} | {seconds:.1f} s |")
    print(f"\nmecab split the training text in {split_seconds:.1f} s")


if __name__ == "__main__":
    main()
