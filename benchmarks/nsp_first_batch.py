"""The first batch of BERT's NSP examples from a small corpus: documents repeated beforehand, or `repeat=True`.

NSP draws the random second segments from a second, shuffled pass over the documents, with a buffer of
1,000 documents (`tfbert.data.pair_examples`). Over an endless stream of documents (`documents.repeat()`,
what `tfbert pretrain` built until this change) that buffer fills with 1,000 tokenized documents before the
first batch, copies of the same few when the corpus has few; with `repeat=True` it fills from one pass. This
script builds `pretraining_examples` both ways as `tfbert pretrain` does (documents shuffled with a buffer
of 1,000, WordPiece of all-MiniLM-L6-v2, batch 8, 64 tokens) in a fresh process per corpus and way, and
reports process CPU seconds to the first batch and the documents tokenized by then.

    python benchmarks/nsp_first_batch.py [--rounds 2] [--output benchmarks/results/nsp-first-batch.md]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # the checkout: benchmarks.lab

from benchmarks.lab.children import child_json  # noqa: E402

WAYS = {"documents.repeat()": False, "repeat=True": True}


def corpora(folder: Path) -> dict[str, Path]:
    """The Lee news corpus (no blank lines: two documents of 256 and 43 lines) and slices of the bundled corpus."""
    from benchmarks.lab.assets import asset
    import tfbert.corpus

    with gzip.open(tfbert.corpus.path(), "rt", encoding="utf-8") as corpus:
        lines = corpus.read().splitlines(keepends=True)
    found = {"Lee news, 0.36 MB": asset("text/lee_background.cor")}
    for count in (2_000, len(lines)):
        path = folder / f"web-{count}.txt"
        path.write_text("".join(lines[:count]), encoding="utf-8")
        documents = sum(1 for line in lines[:count] if not line.strip()) + 1
        found[f"bundled corpus, first {count:,} lines ({documents:,} documents)"] = path
    return found


class DocumentCounter:
    """A tokenizer's `tokenize` that counts the documents it tokenizes (a `tf.py_function` notes each)."""

    def __init__(self, tokenize):
        self.tokenize, self.documents = tokenize, 0

    def _note(self, sentences):
        self.documents += 1
        return sentences

    def __call__(self, sentences):
        import tensorflow as tf

        noted = tf.py_function(self._note, [sentences], tf.string)
        return self.tokenize(tf.ensure_shape(noted, sentences.shape))


def measure(corpus: str, repeat_inside: bool) -> dict[str, float]:
    """In this process: CPU seconds to the first batch and the documents tokenized by then."""
    import time

    from benchmarks.lab.assets import asset
    from tfbert.config import load_config
    from tfbert.data.pretraining import shuffled
    from tfbert.text import WordPieceTokenizer
    from tfbert.training.pretraining_inputs import documents_from, pretraining_examples

    tokenizer = WordPieceTokenizer(asset("minilm/vocab.txt"))
    counting = DocumentCounter(tokenizer.tokenize)
    tokenizer.tokenize = counting
    documents = shuffled(documents_from(corpus), 1000, 0)
    start = time.process_time()
    examples = pretraining_examples(load_config("bert_tiny"), tokenizer,
                                    documents if repeat_inside else documents.repeat(), batch_size=8,
                                    sequence_length=64, seed=0, shuffle_buffer=1000, repeat=repeat_inside)
    next(iter(examples))
    return {"cpu": time.process_time() - start, "documents": counting.documents}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--output", help="also write the table to this Markdown file")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)   # internal: CORPUS WAY, in a child
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], args.measure[1] == "inside")))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="nsp_first_batch-") as scratch:
        for name, path in corpora(Path(scratch)).items():
            best = {}
            for _ in range(args.rounds):
                for way, inside in WAYS.items():
                    result = child_json([sys.executable, __file__, "--measure", str(path),
                                         "inside" if inside else "before"])
                    best[way] = result if way not in best or result["cpu"] < best[way]["cpu"] else best[way]
            before, inside = best["documents.repeat()"], best["repeat=True"]
            rows.append(f"| {name} | {before['cpu']:.2f} | {before['documents']:,} | {inside['cpu']:.2f} | "
                        f"{inside['documents']:,} | {before['cpu'] / inside['cpu']:.1f}x |")
    table = ["| corpus | documents.repeat(): CPU-s | documents tokenized | repeat=True: CPU-s | documents tokenized "
             "| ratio |", "|---|---:|---:|---:|---:|---:|", *rows]
    print("\n".join(table))
    if args.output:
        Path(args.output).write_text("\n".join(table) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
