"""Loading a preprocessing export and its first calls: the tokenizer's shard function kept as one function, or inlined.

An export's signatures call the tokenizer's traced shard function (`tfbert/text/_sharding.py`) at several call sites
(a batch too small to shard, and each shard). Inlined, each site is a copy of the tokenizer for TensorFlow's graph
optimizer (grappler) to go through when a signature runs the first time; marked `_noinline` (the default), the
function is optimized once. This script exports the TF Hub preprocessing model (`export_hub_pair(pair=True)`) of
all-MiniLM-L6-v2 (WordPiece) and of a tiny ALBERT on a SentencePiece unigram model both ways, then, in a fresh
process per export and round, measures process CPU seconds for `tf.saved_model.load`, the first call of the
module (TF Hub's `preprocess(texts)`), the first `serving_default` call (a text pair; what TF Serving's first
request runs) and a second call. Rounds alternate the two settings.

    python benchmarks/first_request.py [--rounds 3] [--output benchmarks/results/first-request.md]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # the checkout: benchmarks.lab

from benchmarks.lab.children import child_json  # noqa: E402

MEASURE = """
import json, sys, time
import tensorflow as tf, tensorflow_text
clock = time.process_time
start = clock(); module = tf.saved_model.load(sys.argv[1]); load = clock() - start
start = clock(); module(tf.constant(["hello world", "a b c"])); call = clock() - start
serve = module.signatures["serving_default"]
start = clock(); serve(text=tf.constant(["x"]), text_pair=tf.constant(["y"])); first = clock() - start
start = clock(); serve(text=tf.constant(["a b"]), text_pair=tf.constant(["c"])); second = clock() - start
print(json.dumps({"load": load, "call": call, "serving": first, "again": second}))
"""
SETTINGS = {"one function (_noinline)": True, "inlined (before)": False}
KINDS = ("wordpiece", "sentencepiece")


def export(folder: Path, noinline: bool) -> dict[str, Path]:
    """The preprocessing exports of both kinds, with the shard function inlined or not."""
    import tensorflow as tf

    import tfbert.text._sharding as sharding
    from benchmarks.lab.assets import asset
    from tfbert.config import load_config
    from tfbert.export import export_hub_pair
    from tfbert.models.encoder import Encoder
    from tfbert.text import SentencePieceTokenizer

    attributes = {"_noinline": True} if noinline else None
    sharding.shard_function = lambda tokenize: tf.function(
        tokenize, input_signature=[tf.TensorSpec([None], tf.string)], experimental_attributes=attributes)
    import tfbert.text.base as base
    base.shard_function = sharding.shard_function
    minilm = Path(asset("minilm/config.json")).parent
    unigram = SentencePieceTokenizer(asset("spm/botchan_en_unigram_1000.model"), lowercase=True,
                                     special_tokens={"pad": "<unk>"})
    albert = load_config("albert_tiny").encoder
    albert = Encoder(albert.replace(vocab_size=unigram.vocabulary_size(), num_layers=1), name="encoder")
    return {"wordpiece": export_hub_pair(minilm, "wordpiece", output_dir=folder, sequence_length=16, pair=True)[0],
            "sentencepiece": export_hub_pair(albert, "sentencepiece", tokenizer=unigram, output_dir=folder,
                                             sequence_length=16, pair=True)[0]}


def measure(path: Path) -> dict[str, float]:
    return child_json([sys.executable, "-c", MEASURE, str(path)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", help="also write the table to this Markdown file")
    parser.add_argument("--export-to", help=argparse.SUPPRESS)   # internal: export here, print the paths
    parser.add_argument("--inline", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.export_to:
        paths = export(Path(args.export_to), noinline=not args.inline)
        print(json.dumps({kind: str(path) for kind, path in paths.items()}))
        return
    with tempfile.TemporaryDirectory(prefix="first_request-") as scratch:
        exports = {}
        for name, noinline in SETTINGS.items():   # each export in a process of its own: the patch stays there
            command = [sys.executable, __file__, "--export-to", str(Path(scratch) / str(noinline))]
            paths = child_json(command + ([] if noinline else ["--inline"]))
            exports[name] = {kind: Path(path) for kind, path in paths.items()}
        best: dict[tuple[str, str], dict[str, float]] = {}
        for _ in range(args.rounds):
            for kind in KINDS:
                for name in SETTINGS:
                    result = measure(exports[name][kind])
                    kept = best.setdefault((kind, name), result)
                    best[(kind, name)] = {key: min(kept[key], value) for key, value in result.items()}
    table = ["| tokenizer | shard function | load (s) | first call (s) | first serving_default (s) | again (ms) |",
             "|---|---|---|---|---|---|"]
    for (kind, name), result in best.items():
        table.append(f"| {kind} | {name} | {result['load']:.2f} | {result['call']:.2f} | {result['serving']:.2f} | "
                     f"{result['again'] * 1000:.1f} |")
    print("\n".join(table))
    if args.output:
        Path(args.output).write_text("\n".join(table) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
