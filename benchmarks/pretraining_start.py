"""Time to the first pretraining step and steady examples/s at growing corpus sizes, one document or many.

Corpora are made from real text (the test assets: the Korean konlpy texts, the Wikipedia sample
and Lee news documents), repeated and shuffled up to each size, in two shapes:

- one document: every Korean sentence a line, no blank line (a line-by-line corpus read as
  BERT's layout: one endless document, cut into windows as it streams);
- many documents: Wikipedia articles, Lee stories and Korean bills, a sentence or paragraph a
  line, a blank line between documents.

Each corpus is trained on by `tfbert pretrain` (bert_tiny, MiniLM's WordPiece vocabulary, NSP +
MLM, batch 32, length 128) in a fresh process, which prints its time to the first step (from
process start: imports, data, model, compilation) and its steps/s after it. The smallest size
(0.1 MB by default) is the reference: its first step is the fixed cost (imports, compilation),
so the column "data" (first step minus that) is what the corpus size costs. Files go to --scratch and are deleted.

    python benchmarks/pretraining_start.py [--sizes 0.1 10 100 1000] [--steps 40] [--scratch /tmp]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the checkout: benchmarks.lab

import argparse  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from benchmarks.lab.assets import asset, wikipedia_articles  # noqa: E402

BATCH_SIZE = 32
CLOCK = re.compile(r"time to first step ([\d.]+) s(?:; ([\d.]+) steps/s)?")


def korean_sentences() -> list[str]:
    files = [asset("text/ko/constitution.txt"), *sorted(asset("text/ko/kobill").glob("*.txt"))]
    return [line.strip() for path in files for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def many_documents() -> list[str]:
    """Documents as text blocks (a line each sentence or paragraph)."""
    lee = [line.strip() for line in asset("text/lee_background.cor").read_text(encoding="utf-8").splitlines()
           if line.strip()]
    bills = [path.read_text(encoding="utf-8").strip() for path in sorted(asset("text/ko/kobill").glob("*.txt"))]
    return wikipedia_articles(asset("text/enwiki-sample.xml.bz2")) + lee + bills


def write_corpus(path: Path, size_mb: float, shape: str, seed: int = 0) -> None:
    """`size_mb` MB of text: shuffled copies of the real units until the size is reached."""
    rng = random.Random(seed)
    units = korean_sentences() if shape == "one document" else many_documents()
    separator = "\n" if shape == "one document" else "\n\n"
    target, written = int(size_mb * 1e6), 0
    with open(path, "w", encoding="utf-8") as handle:
        while written < target:
            rng.shuffle(units)
            block = separator.join(units) + separator
            handle.write(block)
            written += len(block.encode("utf-8"))


def first_step(corpus: Path, steps: int, scratch: Path) -> tuple[float, float]:
    """(time to the first step in s, steps/s after it) of a `tfbert pretrain` process."""
    model_dir = Path(tempfile.mkdtemp(dir=scratch))
    command = [sys.executable, "-m", "tfbert.cli", "pretrain", "--config", "bert_tiny",
               "--tokenizer", str(asset("minilm")), "--data", str(corpus), "--steps", str(steps),
               "--batch-size", str(BATCH_SIZE), "--sequence-length", "128", "--checkpoint-every", str(steps),
               "--seed", "0", "--model-dir", str(model_dir)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)
    found = CLOCK.search(done.stdout)
    if done.returncode or not found:
        raise RuntimeError(f"pretrain failed on {corpus}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return float(found.group(1)), float(found.group(2) or "nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.1, 10, 100, 1000],
                        help="corpus sizes in MB; the smallest is the reference")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--scratch", default=tempfile.gettempdir())
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pretraining_start-", dir=args.scratch))
    rows = []
    try:
        for size in sorted(args.sizes):
            for shape in ("one document", "many documents"):
                corpus = scratch / "corpus.txt"
                write_corpus(corpus, size, shape)
                seconds, rate = first_step(corpus, args.steps, scratch)
                corpus.unlink()
                rows.append((size, shape, seconds, rate))
                print(f"{size:g} MB {shape}: first step {seconds:.1f} s, {rate * BATCH_SIZE:.0f} examples/s",
                      file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    fixed = {shape: seconds for size, shape, seconds, _ in rows if size == min(args.sizes)}
    print("| corpus | shape | time to first step (s) | data: first step - smallest's (s) | examples/s after it |")
    print("|---|---|---|---|---|")
    for size, shape, seconds, rate in rows:
        print(f"| {size:g} MB | {shape} | {seconds:.1f} | {seconds - fixed[shape]:+.1f} | {rate * BATCH_SIZE:.0f} |")


if __name__ == "__main__":
    main()
