"""`tfbert evaluate sts`: Pearson and Spearman correlation of a model's similarities with gold STS scores.

    tfbert evaluate sts runs/korsts --data KorSTS/sts-dev.tsv KorSTS/sts-test.tsv
    tfbert evaluate sts saved_models/korsts --data klue-sts-v1.1_dev.json --json
    tfbert evaluate sts runs/sts-cross --cross-encoder --data sts-test.tsv
"""

from __future__ import annotations

import argparse
import json

from tfbert.commands import add_command, flag_types
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly

SCORERS = {False: "cosine of the embeddings", True: "cross-encoder score"}


def _format_table(rows: list[dict]) -> str:
    width = max(len("file"), *(len(row["file"]) for row in rows))
    lines = [f"{'file':<{width}}  {'format':<9} {'pairs':>7}  {'pearson':>8}  {'spearman':>8}"]
    lines += [f"{row['file']:<{width}}  {row['format']:<9} {row['pairs']:>7}  {_correlation(row['pearson'])}  "
              f"{_correlation(row['spearman'])}" + (f"  ({row['note']})" if "note" in row else "") for row in rows]
    return "\n".join(lines)


def _correlation(value: float | None) -> str:
    return f"{value:>8.4f}" if value is not None else f"{'undefined':>8}"


def _scores(model, pairs, cross_encoder: bool):
    # Deferred (start-up): `tfbert.metrics` imports Keras, kept out of `tfbert --help`
    from tfbert.metrics import paired_cosine

    if cross_encoder:
        return model.score(pairs.first, pairs.second)
    sentences = pairs.sentences()
    vectors = dict(zip(sentences, model.embed(sentences)))
    return paired_cosine([vectors[text] for text in pairs.first], [vectors[text] for text in pairs.second])


def evaluate_files(model, paths: list[str], cross_encoder: bool, format: str | None = None) -> list[dict]:
    """One row per file: its format, pair count, and the Pearson and Spearman correlation of the scores."""
    # Deferred (start-up): `tfbert.data.sentence_pairs` imports TensorFlow, kept out of `tfbert --help`
    import numpy as np

    from tfbert.metrics import sts_correlations
    from tfbert.data.sentence_pairs import read_sentence_pairs

    rows = []
    for path in paths:
        pairs = read_sentence_pairs(path, format)
        if pairs.kind != "score":
            raise CommandError(f"{path}: STS evaluation needs pairs with similarity scores; the {pairs.format} file "
                               f"holds {pairs.kind} rows")
        row = {"file": path, "format": pairs.format, "pairs": len(pairs)}
        if np.ptp(pairs.labels) == 0:   # a correlation with constant scores has no value (0/0)
            rows.append({**row, "pearson": None, "spearman": None,
                         "note": f"correlation undefined: every gold score is {float(pairs.labels[0]):g}"})
            continue
        correlations = sts_correlations(pairs.labels, _scores(model, pairs, cross_encoder))
        rows.append({**row, "pearson": correlations["pearson_correlation"],
                     "spearman": correlations["spearman_correlation"]})
    return rows


def run(args: argparse.Namespace) -> None:
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.inference.text_models` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.inference.text_models import load_cross_encoder, load_text_embedder

    options = {"max_length": args.max_length, "tokenizer": args.tokenizer, "batch_size": args.batch_size}
    try:
        model = (load_cross_encoder(args.model, **options) if args.cross_encoder
                 else load_text_embedder(args.model, pooling=args.pooling, **options))
        rows = evaluate_files(model, args.data, args.cross_encoder, args.format)
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    if args.json:
        print(json.dumps({"model": args.model, "scorer": SCORERS[args.cross_encoder], "files": rows}))
    else:
        print(f"{args.model}: {SCORERS[args.cross_encoder]} against the gold scores")
        print(_format_table(rows))


def add_parser(commands) -> argparse.ArgumentParser:
    parser = add_command(
        commands, "evaluate", "evaluate a model on STS files (Pearson, Spearman)",
        "Score every pair of each STS file with the cosine of MODEL's sentence embeddings (or, with --cross-encoder, "
        "with a regression model's score) and print the Pearson and Spearman correlation with the gold scores, a "
        "row per file. MODEL: a model dir of finetune --task embedding or distill, a .keras file, an encoder or "
        "pretraining run folder, a Hugging Face folder (mean pooling), or a SavedModel from tfbert export. Files: "
        "KorSTS, STS-B, KLUE-STS JSON, s1<TAB>s2<TAB>score or JSON Lines.",
        "\n".join(line[4:] for line in __doc__.splitlines() if line.startswith("    ")))
    parser.add_argument("benchmark", choices=["sts"], help="sts: semantic textual similarity")
    parser.add_argument("model", help="the model to evaluate (see above)")
    parser.add_argument("--data", required=True, nargs="+", help="STS files with gold similarity scores")
    parser.add_argument("--cross-encoder", action="store_true",
                        help="MODEL is a regression model (finetune --task regression) that scores each pair")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--format", help="force the pair format (korsts, stsb, klue-sts, pairs, jsonl)")
    parser.add_argument("--pooling", default="mean", choices=["mean", "cls", "max"],
                        help="pooling of a bare encoder or Hugging Face folder (default mean)")
    parser.add_argument("--max-length", type=flag_types.sequence_length,
                        help="pieces per text (default: the model dir's, else 128)")
    parser.add_argument("--tokenizer", help="tokenizer folder (default: found beside MODEL)")
    parser.add_argument("--batch-size", type=flag_types.positive_int, default=64)
    parser.set_defaults(run=run)
    return parser
