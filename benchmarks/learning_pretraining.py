"""Does pretraining learn on real text? Tiny ALBERT (MLM + SOP) and tiny RoBERTa (MLM) on the CPU.

    python benchmarks/learning_pretraining.py                      # the bundled corpus
    python benchmarks/learning_pretraining.py --corpus a.txt b.txt --steps 800

The corpus (a sentence a line, blank lines between documents) is split by
document: 90% to train a vocabulary and pretrain through `tfbert pretrain`'s
Python API, 10% held out. The table gives the MLM loss of the first 20 training
steps, the held-out MLM loss and accuracy after training, the reduction, and
ALBERT's held-out sentence-order accuracy.
"""

from __future__ import annotations

import sys

# Run as a script, this file's folder comes first on sys.path, where benchmarks/tokenize.py would
# shadow the standard library's `tokenize` module (which inspect and linecache import); drop it.
if sys.path and sys.path[0] and __file__.startswith(sys.path[0]):
    sys.path.pop(0)

import argparse
import gzip
import os
import platform
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from tfbert.config import load_config  # noqa: E402
from tfbert.text.vocab_training import train_byte_bpe, train_sentencepiece  # noqa: E402
from tfbert.training.pretraining import documents_from, pretrain, pretraining_examples  # noqa: E402


def read_documents(paths: list[str]) -> list[str]:
    text = "\n\n".join(
        (gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")).read()
        for path in paths
    )
    return [block.strip() for block in text.split("\n\n") if block.strip()]


def split_corpus(paths: list[str], folder: Path) -> tuple[Path, Path]:
    documents = read_documents(paths)
    held_out = documents[::10]
    train = [document for index, document in enumerate(documents) if index % 10]
    (folder / "train.txt").write_text("\n\n".join(train) + "\n", encoding="utf-8")
    (folder / "held_out.txt").write_text("\n\n".join(held_out) + "\n", encoding="utf-8")
    return folder / "train.txt", folder / "held_out.txt"


class FirstSteps(keras.callbacks.Callback):
    """MLM loss over the first steps (Keras logs a running mean within the first epoch)."""

    def __init__(self, steps: int):
        super().__init__()
        self.steps, self.values = steps, []

    def on_train_batch_end(self, batch, logs=None):
        if len(self.values) < self.steps:
            self.values.append(float(logs["mlm_loss"]))


def run(name: str, config_name: str, args: argparse.Namespace, train: Path, held_out: Path, folder: Path) -> dict:
    config = load_config(config_name)
    if config.architecture == "albert":
        tokenizer = train_sentencepiece(str(train), args.vocab_size, folder / f"{name}_vocab", lowercase=True)
    else:
        tokenizer = train_byte_bpe(str(train), args.vocab_size, folder / f"{name}_vocab")
    first = FirstSteps(20)
    start = time.perf_counter()
    model = pretrain(config, tokenizer=tokenizer, data=[str(train)], model_dir=str(folder / name), steps=args.steps,
                     global_batch_size=args.batch_size, strategy="cpu", sequence_length=args.sequence_length,
                     max_predictions=args.sequence_length * 3 // 20, learning_rate=args.learning_rate,
                     optimizer_recipe=args.optimizer,
                     warmup_steps=args.steps // 10, checkpoint_every=args.steps, seed=0, verbose=0,
                     callbacks=[first])
    minutes = (time.perf_counter() - start) / 60
    held_out_batches = pretraining_examples(model.config, tokenizer, documents_from(str(held_out)),
                                            batch_size=args.batch_size, sequence_length=args.sequence_length,
                                            max_predictions=args.sequence_length * 3 // 20, seed=1)
    scores = model.evaluate(held_out_batches.take(args.eval_batches), return_dict=True, verbose=0)
    return {"start": first.values[-1], "minutes": minutes, **scores}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", help="text files; default: the corpus bundled with tfbert")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--vocab-size", type=int, default=4000)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--eval-batches", type=int, default=20)
    parser.add_argument("--optimizer", help="optimizer recipe (default: each architecture's, LAMB for ALBERT)")
    parser.add_argument("--configs", nargs="+", default=["albert_tiny", "roberta_tiny"])
    args = parser.parse_args()
    if not args.corpus:
        from tfbert.corpus import path as bundled_corpus

        args.corpus = [str(bundled_corpus())]

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        train, held_out = split_corpus(args.corpus, folder)
        print(f"# {platform.machine()}, {os.cpu_count()} cores; corpus {', '.join(Path(p).name for p in args.corpus)}; "
              f"{args.steps} steps of {args.batch_size} x {args.sequence_length}, vocabulary {args.vocab_size}, "
              f"optimizer {args.optimizer or 'per architecture'} at {args.learning_rate}")
        print("| model | MLM loss, first 20 steps | held-out MLM loss | reduction | held-out MLM acc "
              "| held-out SOP acc | minutes |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for config_name in args.configs:
            name = config_name.split("_")[0]
            result = run(name, config_name, args, train, held_out, folder)
            reduction = 1 - result["mlm_loss"] / result["start"]
            sop = f"{result['sop_accuracy']:.3f}" if "sop_accuracy" in result else "—"
            print(f"| {config_name} | {result['start']:.3f} | {result['mlm_loss']:.3f} | {reduction:.0%} | "
                  f"{result['mlm_accuracy']:.3f} | {sop} | {result['minutes']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
