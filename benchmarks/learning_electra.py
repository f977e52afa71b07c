"""Does a tiny ELECTRA learn replaced-token detection on real text on the CPU?

Trains a tiny ELECTRA (discriminator L=2, H=128 or `--hidden`, heads of 64; generator 1/4 wide) with the `electra`
recipe of `tfbert.training.pretraining` (consecutive one/two segments, 15% token masking) on
the bundled World English Bible (`tfbert.corpus`, 9/10 of the chapters), with a WordPiece
vocabulary trained on those chapters by `tfbert.text.vocab_training`, and measures the
discriminator on held-out chapters (the other 1/10) before and after: precision and recall of
the replaced class at the 0.5 threshold (the always-original baseline has recall 0 and no
precision), and, to see learning that the threshold hides, the ranking quality (ROC AUC of the
replaced class; 0.5 is chance), the share of replaced tokens and how often the generator's
sample is the original token.

    python benchmarks/learning_electra.py [--steps 2000] [--batch-size 32] [--hidden 128]
"""

from __future__ import annotations

import sys
from pathlib import Path

# benchmarks/tokenize.py would shadow the standard library's tokenize: look here last.
_HERE = str(Path(__file__).resolve().parent)
sys.path = [entry for entry in sys.path if entry not in (_HERE, "")] + [_HERE]

from learning_common import BibleRun, bible_arguments, table  # noqa: E402

import numpy as np  # noqa: E402

from recipes5_helpers import tiny_electra  # noqa: E402
from tfbert.models.electra import ElectraPretrainingModel  # noqa: E402


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Probability that a replaced token scores above an original one (ties count half)."""
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    # Average ranks over ties.
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    average = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(average, counts)
    positive = labels > 0
    n_positive, n_negative = positive.sum(), (~positive).sum()
    if not n_positive or not n_negative:
        return float("nan")
    return float((ranks[positive].sum() - n_positive * (n_positive + 1) / 2) / (n_positive * n_negative))


def rtd_diagnostics(model: ElectraPretrainingModel, heldout) -> dict[str, float]:
    """Held-out AUC, share of replaced tokens and of samples equal to the original (one sampling pass)."""
    scores, labels, same, slots = [], [], 0.0, 0.0
    for inputs, targets in heldout:
        outputs = model(inputs, training=False)
        replaced = np.asarray(model.replaced_labels(inputs, targets, outputs))
        real = np.asarray(inputs["padding_mask"]) > 0
        scores.append(np.asarray(outputs["rtd_logits"])[real])
        labels.append(replaced[real])
        weights = np.asarray(targets["masked_weights"]) > 0
        same += float((np.asarray(outputs["sampled_ids"]) == np.asarray(targets["masked_ids"]))[weights].sum())
        slots += float(weights.sum())
    scores, labels = np.concatenate(scores), np.concatenate(labels)
    return {"auc": roc_auc(scores, labels), "replaced": float(labels.mean()), "sampled_original": same / slots}


def main() -> None:
    run = BibleRun(bible_arguments(steps=2000))
    steps = run.args.steps
    config = run.config(tiny_electra(hidden=run.args.hidden, layers=2, heads=run.args.hidden // 64, embedding=128))
    heldout = run.heldout(config, max_predictions=10)
    model = ElectraPretrainingModel(config, seed=0)
    diagnostics = {0: rtd_diagnostics(model, heldout)}
    before, after, seconds = run.train_and_evaluate(model, config, heldout, optimizer_recipe="electra",
                                                    learning_rate=1e-3, max_predictions=10)
    diagnostics[steps] = rtd_diagnostics(model, heldout)

    def row(name, metrics, extra):
        return (name, f"{metrics['rtd_recall']:.3f}", f"{metrics['rtd_precision']:.3f}",
                f"{metrics['rtd_accuracy']:.3f}", f"{extra['auc']:.3f}", f"{extra['replaced']:.3f}",
                f"{metrics['mlm_accuracy']:.3f}", f"{extra['sampled_original']:.3f}")

    rows = [
        ("always original (baseline)", "0.000", "n/a (nothing predicted)", f"{1 - diagnostics[steps]['replaced']:.3f}",
         "0.5", "", "", ""),
        row("tiny ELECTRA, step 0", before, diagnostics[0]),
        row(f"tiny ELECTRA, step {steps}", after, diagnostics[steps]),
    ]
    print(run.header("ELECTRA replaced-token detection on held-out WEB chapters", seconds))
    print(table(rows, ("model", "RTD recall", "RTD precision", "RTD accuracy", "RTD AUC", "replaced share",
                       "generator MLM accuracy", "sample = original")))
    ok = after["rtd_recall"] > 0.5 and after["rtd_precision"] > 0.5
    print("PASS" if ok else "FAIL", "(recall and precision of replaced tokens above 0.5)")


if __name__ == "__main__":
    main()
