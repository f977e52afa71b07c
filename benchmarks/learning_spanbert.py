"""Does a tiny SpanBERT learn MLM and SBO on real text on the CPU?

Trains a tiny SpanBERT (L=2, H=128) with the `spanbert` recipe of
`tfbert.training.pretraining_inputs` (one segment of full sentences, geometric spans of whole words,
the span-boundary inputs of `MaskedLMMasker(unit="span")`) on 9/10 of the bundled World
English Bible's chapters with a WordPiece vocabulary trained on them, and compares the MLM and
SBO losses on held-out chapters (fixed masks) before and after training.

    python benchmarks/learning_spanbert.py [--steps 1500]
"""

from __future__ import annotations



from learning_common import BibleRun, bible_arguments, table  # noqa: E402

from tiny_recipes import tiny_spanbert  # noqa: E402
from tfbert.families.spanbert.models import SpanBertPretrainingModel  # noqa: E402


def main() -> None:
    run = BibleRun(bible_arguments(steps=1500))
    steps = run.args.steps
    config = run.config(tiny_spanbert(hidden=run.args.hidden, layers=2, heads=run.args.hidden // 64))
    heldout = run.heldout(config, max_predictions=12)
    model = SpanBertPretrainingModel(config)
    before, after, seconds = run.train_and_evaluate(model, config, heldout, optimizer_recipe="bert",
                                                    learning_rate=1e-3, max_predictions=12)
    rows = []
    for name in ("mlm_loss", "sbo_loss", "mlm_accuracy", "sbo_accuracy"):
        change = f"{100 * (after[name] - before[name]) / before[name]:+.1f}%"
        rows.append((name, f"{before[name]:.3f}", f"{after[name]:.3f}", change))
    print(run.header("SpanBERT MLM + SBO on held-out WEB chapters", seconds))
    print(table(rows, ("metric", "step 0", f"step {steps}", "change")))
    ok = all(after[name] <= 0.7 * before[name] for name in ("mlm_loss", "sbo_loss"))
    print("PASS" if ok else "FAIL", "(MLM and SBO losses down by at least 30%)")


if __name__ == "__main__":
    main()
