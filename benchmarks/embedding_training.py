"""Training speed of `finetune --task embedding` beside sentence-transformers' trainer, same model, data and batch.

Both train all-MiniLM-L6-v2 as a bi-encoder with the cosine loss (CosineSimilarityLoss: MSE between the
cosine and the score mapped to 0-1) on the same scored pairs of Botchan lines, batch `--batch-size`, at
most 128 pieces, AdamW 2e-5 with 10% warm-up, on the CPU:

- tfbert: `train_sentence_embedder` (what `tfbert finetune --task embedding` runs), timed per step by a
  Keras callback.
- sentence-transformers: `SentenceTransformerTrainer` with `CosineSimilarityLoss`, timed per step by a
  trainer callback.

Steps per second are the median step time over the steps after `--skip` (tracing, warm-up), runs
alternating for `--rounds` rounds.

    nice -n 19 python benchmarks/embedding_training.py [--steps 40] [--rounds 2] [--batch-size 16]
"""

from __future__ import annotations

import sys


import argparse
import os
import statistics
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import keras  # noqa: E402
import numpy as np  # noqa: E402

from sentence_embeddings_common import StepTimes, botchan_lines, machine, minilm_folder, sentence_transformer  # noqa: E402

MAX_LENGTH = 128


def scored_pairs(count: int, seed: int = 0) -> tuple[list[str], list[str], np.ndarray]:
    lines = botchan_lines(2 * count, shortest=60, longest=160)
    scores = np.random.default_rng(seed).uniform(0, 5, count).astype("float32")
    return lines[0::2], lines[1::2], scores


class KerasStepTimes(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = StepTimes()

    def on_train_batch_end(self, batch, logs=None):
        self.times.step()


def tfbert_steps_per_second(first, second, scores, batch_size: int, skip: int) -> float:
    from tfbert.tasks import SentencePairs, train_sentence_embedder
    from tfbert.text import WordPieceTokenizer

    folder = minilm_folder()
    train = SentencePairs(first, second, scores, "score", "pairs", score_range=(0.0, 5.0))
    dev = SentencePairs(first[:32], second[:32], scores[:32], "score", "pairs", score_range=(0.0, 5.0))
    timer = KerasStepTimes()
    with tempfile.TemporaryDirectory() as model_dir:
        train_sentence_embedder(folder, WordPieceTokenizer(folder / "vocab.txt"), train, dev, model_dir, loss="cosine",
                                max_length=MAX_LENGTH, epochs=1, batch_size=batch_size, learning_rate=2e-5,
                                strategy="cpu", seed=0, callbacks=[timer])
    return timer.times.steps_per_second(skip)


def sentence_transformers_steps_per_second(first, second, scores, batch_size: int, skip: int) -> float:
    import datasets
    import transformers
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer import losses

    times = StepTimes()

    class Timer(transformers.TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            times.step()

    model = sentence_transformer(minilm_folder(), MAX_LENGTH)
    data = datasets.Dataset.from_dict({"sentence1": first, "sentence2": second, "score": (scores / 5.0).tolist()})
    with tempfile.TemporaryDirectory() as output_dir:
        arguments = SentenceTransformerTrainingArguments(
            output_dir=output_dir, per_device_train_batch_size=batch_size, num_train_epochs=1, learning_rate=2e-5,
            warmup_steps=0.1, weight_decay=0.01, use_cpu=True, report_to="none", save_strategy="no",
            logging_strategy="no", seed=0, dataloader_drop_last=False)
        SentenceTransformerTrainer(model=model, args=arguments, train_dataset=data,
                                   loss=losses.CosineSimilarityLoss(model), callbacks=[Timer()]).train()
    return times.steps_per_second(skip)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--skip", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--torch-threads", type=int, help="torch.set_num_threads (default: torch's own choice)")
    args = parser.parse_args()
    import torch

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    first, second, scores = scored_pairs(args.steps * args.batch_size)
    print(f"{machine()}; torch {torch.__version__} ({torch.get_num_threads()} threads)")
    systems = {"tfbert finetune --task embedding": tfbert_steps_per_second,
               "sentence-transformers trainer": sentence_transformers_steps_per_second}
    results = {name: [] for name in systems}
    for _ in range(args.rounds):
        for name, run in systems.items():
            results[name].append(run(first, second, scores, args.batch_size, args.skip))
            print(f"{name}: {results[name][-1]:.2f} steps/s", flush=True)
    print(f"| system | steps/s, batch {args.batch_size} (median of {args.rounds}) | pairs/s |")
    print("|---|---:|---:|")
    for name, values in results.items():
        rate = statistics.median(values)
        print(f"| {name} | {rate:.2f} | {rate * args.batch_size:.1f} |")
    ratios = [a / b for a, b in zip(*results.values())]
    print(f"ratio per round: {', '.join(f'{ratio:.2f}x' for ratio in ratios)}")


if __name__ == "__main__":
    main()
