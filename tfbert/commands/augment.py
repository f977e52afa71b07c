"""`tfbert augment`: silver STS pairs labelled by a cross-encoder (Augmented SBERT).

    tfbert augment --cross-encoder runs/sts-cross --sentences sentences.txt --pairs bm25 --output silver.tsv
    tfbert augment --cross-encoder runs/sts-cross --sentences sts-train.tsv --pairs embedding-neighbours \\
        --bi-encoder runs/korsts --neighbours 5 --output silver.tsv
    tfbert finetune --task embedding --pretrained runs/albert --train sts-train.tsv silver.tsv --eval sts-dev.tsv ...
"""

from __future__ import annotations

import argparse

from tfbert import artifacts
from tfbert.commands import add_command, add_overwrite_argument, flag_types
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.outputs import new_output

SAMPLERS = ("random", "bm25", "embedding-neighbours")


def sample_pairs(args: argparse.Namespace, sentences: list[str]):
    # Deferred (start-up): `tfbert.data.silver` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.inference.text_models import load_text_embedder
    from tfbert.data.silver import bm25_pairs, neighbour_pairs, random_pairs

    if args.pairs == "random":
        return random_pairs(args.count or args.neighbours * len(sentences), len(sentences), args.seed)
    if args.pairs == "bm25":
        return bm25_pairs(sentences, args.neighbours)
    if not args.bi_encoder:
        raise CommandError("--pairs embedding-neighbours needs --bi-encoder, the embedding model that finds them")
    return neighbour_pairs(load_text_embedder(args.bi_encoder).embed(sentences), args.neighbours)


def _clip(scores, args: argparse.Namespace):
    """Scores clipped to the cross-encoder's training range (its task.json), so silver stays on the gold scale."""
    import numpy as np

    low_high = artifacts.open(args.cross_encoder).task.get("score_range")
    return np.clip(scores, *low_high) if low_high else scores


def run(args: argparse.Namespace) -> None:
    import_tensorflow_quietly()
    # Deferred (start-up): `tfbert.data.silver` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.inference.text_models import load_cross_encoder
    from tfbert.data.silver import pair_texts, read_sentences, write_silver

    try:
        with new_output(args.output, overwrite=args.overwrite) as output:   # refused before the models load
            sentences = read_sentences(args.sentences)
            if len(sentences) < 2:
                raise CommandError(f"{args.sentences}: {len(sentences)} distinct sentence(s); pairs need at least 2")
            cross_encoder = load_cross_encoder(args.cross_encoder, batch_size=args.batch_size)
            pairs = sample_pairs(args, sentences)
            scores = _clip(cross_encoder.score(*pair_texts(sentences, pairs)), args)
            count = write_silver(output, sentences, pairs, scores)
    except (OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    print(f"wrote {args.output}: {count} {args.pairs} pairs of {len(sentences)} sentences, scored by "
          f"{args.cross_encoder} (mean score {float(scores.mean()) if count else 0:.3f})")


def add_parser(commands) -> argparse.ArgumentParser:
    parser = add_command(
        commands, "augment", "silver STS pairs labelled by a cross-encoder (Augmented SBERT)",
        "Sample pairs of sentences (random, BM25 lexical neighbours, or nearest neighbours by a bi-encoder's "
        "cosine), score them with a fine-tuned cross-encoder (a finetune --task regression model) and write "
        "s1<TAB>s2<TAB>score lines, which finetune --task embedding reads next to the gold pairs.",
        "\n".join(line[4:] for line in __doc__.splitlines() if line.startswith("    ")))
    parser.add_argument("--cross-encoder", required=True,
                        help="regression model dir (finetune --task regression), .keras file or SavedModel")
    parser.add_argument("--sentences", required=True,
                        help="a sentence a line (.txt), or a sentence-pair file whose sentences are used")
    parser.add_argument("--pairs", required=True, choices=SAMPLERS, help="how pairs are sampled")
    parser.add_argument("--output", required=True, help="the silver s1<TAB>s2<TAB>score file to write")
    parser.add_argument("--bi-encoder", help="embedding-neighbours: the embedding model that finds neighbours")
    parser.add_argument("--neighbours", type=flag_types.positive_int, default=3,
                        help="bm25 / embedding-neighbours: pairs per sentence (default 3)")
    parser.add_argument("--count", type=flag_types.positive_int,
                        help="random: number of pairs (default: neighbours x sentences)")
    parser.add_argument("--batch-size", type=flag_types.positive_int, default=64)
    parser.add_argument("--seed", type=flag_types.seed)
    add_overwrite_argument(parser)
    parser.set_defaults(run=run)
    return parser
