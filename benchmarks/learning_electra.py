"""Does a tiny ELECTRA learn replaced-token detection on real text on the CPU?

Trains a tiny ELECTRA (discriminator L=2, H=128 or `--hidden`, heads of 64; generator 1/4 wide) with the `electra`
recipe of `tfbert.training.pretraining_inputs` (consecutive one/two segments, 15% token masking) on
the bundled World English Bible (`tfbert.corpus`, 9/10 of the chapters), with a WordPiece
vocabulary trained on those chapters by `tfbert.text.vocab_training`, and measures the
discriminator on held-out chapters (the other 1/10) before and after: precision and recall of
the replaced class at the 0.5 threshold (the always-original baseline has recall 0 and no
precision), and, to see learning that the threshold hides, the ranking quality (ROC AUC of the
replaced class; 0.5 is chance), the share of replaced tokens and how often the generator's
sample is the original token.

`--discriminator minilm` is a control for what the tiny model lacks: the discriminator has the
size (L=6, H=384) and uncased WordPiece vocabulary of all-MiniLM-L6-v2 and starts from that
pretrained checkpoint (the test asset, `python tests/assets.py`), an encoder that already reads
word order; the generator (1/4 wide) starts from scratch. `--discriminator minilm-random` is the
same model from a random initialisation. `--hidden` and `--vocab-size` apply to the tiny model only.

    python benchmarks/learning_electra.py [--steps 2000] [--batch-size 32] [--hidden 128]
        [--discriminator tiny|minilm|minilm-random] [--learning-rate 1e-3]
"""

from __future__ import annotations

import json


from learning_common import BibleRun, bible_arguments, table  # noqa: E402

import numpy as np  # noqa: E402

from assets import asset  # noqa: E402
from tiny_recipes import tiny_electra  # noqa: E402
from tfbert.config import load_config, scaled_generator  # noqa: E402
from tfbert.convert.huggingface import config_from_huggingface, load_state_dict, read_state_dict  # noqa: E402
from tfbert.families.electra.models import ElectraPretrainingModel  # noqa: E402
from tfbert.text import WordPieceTokenizer  # noqa: E402

DISCRIMINATORS = ("tiny", "minilm", "minilm-random")
LABELS = {"tiny": "tiny ELECTRA", "minilm": "ELECTRA, discriminator from MiniLM",
          "minilm-random": "ELECTRA, MiniLM's size, random init"}


def electra_arguments(parser) -> None:
    parser.add_argument("--discriminator", choices=DISCRIMINATORS, default="tiny",
                        help="tiny (L=2, --hidden), or all-MiniLM-L6-v2's size and vocabulary: its pretrained "
                             "weights (minilm) or random ones (minilm-random)")
    parser.add_argument("--learning-rate", type=float, default=1e-3)


def minilm_electra():
    """ELECTRA config with all-MiniLM-L6-v2's encoder as the discriminator and a generator 1/4 as wide."""
    minilm = config_from_huggingface(json.loads(asset("minilm/config.json").read_text())).encoder
    base = load_config("electra_small")
    sizes = ("vocab_size", "hidden_size", "num_layers", "num_heads", "intermediate_size", "embedding_size",
             "max_positions")
    encoder = base.encoder.replace(**{field: getattr(minilm, field) for field in sizes})
    return base.replace(encoder=encoder, generator=scaled_generator(encoder, 0.25))


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
    args = bible_arguments(steps=2000, add_arguments=electra_arguments)
    if args.discriminator == "tiny":
        run = BibleRun(args)
        config = run.config(tiny_electra(hidden=args.hidden, layers=2, heads=args.hidden // 64, embedding=128))
    else:
        run = BibleRun(args, tokenizer=WordPieceTokenizer(asset("minilm/vocab.txt")))
        config = run.config(minilm_electra())
    steps = args.steps
    heldout = run.heldout(config, max_predictions=10)
    model = ElectraPretrainingModel(config, seed=0)
    if args.discriminator == "minilm":
        load_state_dict(model.discriminator, read_state_dict(asset("minilm")), "bert")
    diagnostics = {0: rtd_diagnostics(model, heldout)}
    before, after, seconds = run.train_and_evaluate(model, config, heldout, optimizer_recipe="electra",
                                                    learning_rate=args.learning_rate, max_predictions=10)
    diagnostics[steps] = rtd_diagnostics(model, heldout)

    def row(name, metrics, extra):
        return (name, f"{metrics['rtd_recall']:.3f}", f"{metrics['rtd_precision']:.3f}",
                f"{metrics['rtd_accuracy']:.3f}", f"{extra['auc']:.3f}", f"{extra['replaced']:.3f}",
                f"{metrics['mlm_accuracy']:.3f}", f"{extra['sampled_original']:.3f}")

    rows = [
        ("always original (baseline)", "0.000", "n/a (nothing predicted)", f"{1 - diagnostics[steps]['replaced']:.3f}",
         "0.5", "", "", ""),
        row(f"{LABELS[args.discriminator]}, step 0", before, diagnostics[0]),
        row(f"{LABELS[args.discriminator]}, step {steps}", after, diagnostics[steps]),
    ]
    print(run.header(f"ELECTRA replaced-token detection on held-out WEB chapters (lr {args.learning_rate:g})", seconds))
    print(table(rows, ("model", "RTD recall", "RTD precision", "RTD accuracy", "RTD AUC", "replaced share",
                       "generator MLM accuracy", "sample = original")))
    ok = after["rtd_recall"] > 0.5 and after["rtd_precision"] > 0.5
    verdict = "PASS" if ok else "FAIL"
    if args.discriminator != "tiny":
        verdict = f"control, not the tiny-ELECTRA goal: {'above' if ok else 'not above'}"
    print(verdict, "(recall and precision of replaced tokens above 0.5)")


if __name__ == "__main__":
    main()
