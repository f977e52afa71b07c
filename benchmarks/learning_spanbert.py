"""Does a tiny SpanBERT learn MLM and SBO on real text on the CPU?

Trains a tiny SpanBERT (L=2, H=128) with the `spanbert` recipe of
`tfbert.training.pretraining` (one segment of full sentences, geometric spans of whole words,
the span-boundary inputs of `MaskedLMMasker(unit="span")`) on 9/10 of the bundled World
English Bible's chapters with a WordPiece vocabulary trained on them, and compares the MLM and
SBO losses on held-out chapters (fixed masks) before and after training.

    python benchmarks/learning_spanbert.py [--steps 1500]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/tokenize.py would shadow the standard library's tokenize: look here last.
_HERE = str(Path(__file__).resolve().parent)
sys.path = [entry for entry in sys.path if entry not in (_HERE, "")] + [_HERE]

from learning_common import evaluate, frozen, machine, split_corpus_documents, table  # noqa: E402

import keras  # noqa: E402

from recipes5_helpers import tiny_spanbert  # noqa: E402
from tfbert.models.spanbert import SpanBertPretrainingModel  # noqa: E402
from tfbert.text.vocab_training import train_wordpiece  # noqa: E402
from tfbert.training.optimization import create_optimizer  # noqa: E402
from tfbert.training.pretraining import config_for_tokenizer, documents_from, pretraining_examples  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--vocab-size", type=int, default=2000)
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    work = Path(tempfile.mkdtemp())
    train_file, heldout_file = split_corpus_documents(work)
    tokenizer = train_wordpiece(str(train_file), args.vocab_size, work / "vocab")
    config = config_for_tokenizer(tiny_spanbert(hidden=128, layers=2, heads=2), tokenizer)

    def examples(path, seed):
        return pretraining_examples(config, tokenizer, documents_from(str(path)).repeat(), batch_size=args.batch_size,
                                    sequence_length=args.sequence_length, max_predictions=12, seed=seed)

    heldout = frozen(examples(heldout_file, 1), 40)
    model = SpanBertPretrainingModel(config)
    model.compile(optimizer=create_optimizer("bert", args.steps, learning_rate=1e-3, warmup_steps=args.steps // 10),
                  jit_compile=False)
    before = evaluate(model, heldout)
    start = time.time()
    model.fit(examples(train_file, 0), steps_per_epoch=args.steps, epochs=1, verbose=0)
    seconds = time.time() - start
    after = evaluate(model, heldout)
    rows = []
    for name in ("mlm_loss", "sbo_loss", "mlm_accuracy", "sbo_accuracy"):
        change = f"{100 * (after[name] - before[name]) / before[name]:+.1f}%"
        rows.append((name, f"{before[name]:.3f}", f"{after[name]:.3f}", change))
    print(f"SpanBERT MLM + SBO on held-out WEB chapters ({machine()})")
    print(f"vocabulary {tokenizer.vocabulary_size()}, batch {args.batch_size} x {args.sequence_length}, "
          f"{args.steps} steps in {seconds:.0f} s")
    print(table(rows, ("metric", "step 0", f"step {args.steps}", "change")))
    ok = all(after[name] <= 0.7 * before[name] for name in ("mlm_loss", "sbo_loss"))
    print("PASS" if ok else "FAIL", "(MLM and SBO losses down by at least 30%)")


if __name__ == "__main__":
    main()
