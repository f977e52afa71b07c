"""Shared pieces of the learning benchmarks (learning_electra/spanbert/xlm.py).

Corpus splits, the WordPiece set-up of the Bible runs (learning_electra/spanbert.py), training
with held-out evaluation before and after, and tables.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "training")]

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

import tfbert.corpus  # noqa: E402


def bible_arguments(steps: int, add_arguments=None) -> argparse.Namespace:
    """The command line of the Bible runs: --steps, --batch-size, --sequence-length, --vocab-size, --hidden,
    and whatever `add_arguments(parser)` adds."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--vocab-size", type=int, default=2000)
    parser.add_argument("--hidden", type=int, default=128, help="hidden size of the (discriminator) encoder")
    if add_arguments is not None:
        add_arguments(parser)
    return parser.parse_args()


class BibleRun:
    """Seeded set-up of a learning run on the bundled WEB corpus with a WordPiece vocabulary.

    Splits the chapters (9/10 train, 1/10 held out), trains the vocabulary on the training side
    (unless a `tokenizer` is given) and makes `(inputs, labels)` batches of a model config's pretraining recipe.
    """

    def __init__(self, args: argparse.Namespace, tokenizer=None):
        from tfbert.text.vocab_training import train_wordpiece

        keras.utils.set_random_seed(0)
        self.args = args
        work = Path(tempfile.mkdtemp())
        # The last chapter of every 10 is held out.
        self.train_file, self.heldout_file = tfbert.corpus.write_held_out_split(tfbert.corpus.chapters(), work,
                                                                                held_out_index=9)
        self.tokenizer = tokenizer or train_wordpiece(str(self.train_file), args.vocab_size, work / "vocab")

    def config(self, config):
        from tfbert.training.pretraining_config import config_for_tokenizer

        return config_for_tokenizer(config, self.tokenizer)

    def examples(self, config, path: Path, *, max_predictions: int, seed: int) -> tf.data.Dataset:
        from tfbert.training.pretraining_inputs import documents_from, pretraining_examples

        return pretraining_examples(config, self.tokenizer, documents_from(str(path)).repeat(),
                                    batch_size=self.args.batch_size, sequence_length=self.args.sequence_length,
                                    max_predictions=max_predictions, seed=seed)

    def heldout(self, config, *, max_predictions: int, batches: int = 40) -> tf.data.Dataset:
        """`batches` held-out batches, masks frozen (the same in every evaluation)."""
        return frozen(self.examples(config, self.heldout_file, max_predictions=max_predictions, seed=1), batches)

    def train_and_evaluate(self, model, config, heldout, *, optimizer_recipe: str, learning_rate: float,
                           max_predictions: int) -> tuple[dict, dict, float]:
        """Held-out metrics before and after `--steps` of `model.fit` (10% warm-up), and the training seconds."""
        from tfbert.training.optimization import create_optimizer

        steps = self.args.steps
        model.compile(optimizer=create_optimizer(optimizer_recipe, steps, learning_rate=learning_rate,
                                                 warmup_steps=steps // 10), jit_compile=False)
        before = evaluate(model, heldout)
        start = time.time()
        model.fit(self.examples(config, self.train_file, max_predictions=max_predictions, seed=0),
                  steps_per_epoch=steps, epochs=1, verbose=0)
        seconds = time.time() - start
        return before, evaluate(model, heldout), seconds

    def header(self, title: str, seconds: float) -> str:
        args = self.args
        return (f"{title} ({machine()})\nvocabulary {self.tokenizer.vocabulary_size()}, batch {args.batch_size} x "
                f"{args.sequence_length}, {args.steps} steps in {seconds:.0f} s")


def frozen(dataset: tf.data.Dataset, batches: int) -> tf.data.Dataset:
    """The first `batches` batches, cached so that every evaluation sees the same masks.

    The cardinality is asserted because `model.evaluate` (Keras 3.15, TensorFlow backend) on a
    dataset of unknown cardinality runs one more test step that fails on the exhausted iterator,
    and in that failed step the models' `Mean` metrics still count one more update (their total
    does not change): every mean loss and accuracy came out scaled by `batches / (batches + 1)`.
    """
    cached = dataset.take(batches).cache()
    for _ in cached:
        pass
    return cached.apply(tf.data.experimental.assert_cardinality(batches))


def evaluate(model, dataset) -> dict[str, float]:
    return {name: float(value) for name, value in model.evaluate(dataset, verbose=0, return_dict=True).items()}


def machine() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores visible, TF {tf.__version__}, {time.strftime('%Y-%m-%d')}"


def table(rows: list[tuple], header: tuple) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
