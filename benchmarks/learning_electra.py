"""Does a tiny ELECTRA learn replaced-token detection on real text on the CPU?

Trains a tiny ELECTRA (discriminator L=2, H=128; generator 1/4 wide) with the `electra`
recipe of `tfbert.training.pretraining` (consecutive one/two segments, 15% token masking) on
the bundled World English Bible (`tfbert.corpus`, 9/10 of the chapters), with a WordPiece
vocabulary trained on those chapters by `tfbert.text.vocab_training`, and measures the
discriminator on held-out chapters (the other 1/10) before and after: precision and recall of
the replaced class. The always-original baseline has recall 0 (and no precision).

    python benchmarks/learning_electra.py [--steps 2000]
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

from learning_common import evaluate, frozen, machine, split_corpus_documents, table

import keras

from recipes5_helpers import tiny_electra
from tfbert.models.electra import ElectraPretrainingModel
from tfbert.text.vocab_training import train_wordpiece
from tfbert.training.optimization import create_optimizer
from tfbert.training.pretraining import config_for_tokenizer, documents_from, pretraining_examples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--vocab-size", type=int, default=2000)
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    work = Path(tempfile.mkdtemp())
    train_file, heldout_file = split_corpus_documents(work)
    tokenizer = train_wordpiece(str(train_file), args.vocab_size, work / "vocab")
    config = config_for_tokenizer(tiny_electra(hidden=128, layers=2, heads=2, embedding=128), tokenizer)

    def examples(path, seed):
        return pretraining_examples(config, tokenizer, documents_from(str(path)).repeat(), batch_size=args.batch_size,
                                    sequence_length=args.sequence_length, max_predictions=10, seed=seed)

    heldout = frozen(examples(heldout_file, 1), 40)
    model = ElectraPretrainingModel(config, seed=0)
    model.compile(optimizer=create_optimizer("electra", args.steps, learning_rate=1e-3, warmup_steps=args.steps // 10),
                  jit_compile=False)
    before = evaluate(model, heldout)
    start = time.time()
    model.fit(examples(train_file, 0), steps_per_epoch=args.steps, epochs=1, verbose=0)
    seconds = time.time() - start
    after = evaluate(model, heldout)
    rows = [
        ("always original (baseline)", "0.000", "n/a (nothing predicted)", "", ""),
        ("tiny ELECTRA, step 0", f"{before['rtd_recall']:.3f}", f"{before['rtd_precision']:.3f}",
         f"{before['rtd_accuracy']:.3f}", f"{before['mlm_accuracy']:.3f}"),
        (f"tiny ELECTRA, step {args.steps}", f"{after['rtd_recall']:.3f}", f"{after['rtd_precision']:.3f}",
         f"{after['rtd_accuracy']:.3f}", f"{after['mlm_accuracy']:.3f}"),
    ]
    print(f"ELECTRA replaced-token detection on held-out WEB chapters ({machine()})")
    print(f"vocabulary {tokenizer.vocabulary_size()}, batch {args.batch_size} x {args.sequence_length}, "
          f"{args.steps} steps in {seconds:.0f} s")
    print(table(rows, ("model", "RTD recall", "RTD precision", "RTD accuracy", "generator MLM accuracy")))
    ok = after["rtd_recall"] > 0.5 and after["rtd_precision"] > 0.5
    print("PASS" if ok else "FAIL", "(recall and precision of replaced tokens above 0.5)")


if __name__ == "__main__":
    main()
