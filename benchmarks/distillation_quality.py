"""Distillation quality: `tfbert distill` beside the same recipe in sentence-transformers (PyTorch).

Multilingual knowledge distillation (Reimers & Gurevych 2020) on English-Spanish Bible verse pairs (KJV /
Reina-Valera 1909, SWORD modules in the test assets): teacher all-MiniLM-L6-v2 (mean pooling, unit
length), student a copy of the same checkpoint, MSE between the student's embeddings of the English
verse and of its Spanish translation and the teacher's embedding of the English verse. Same pairs,
steps, batch, learning rate (AdamW, 10% warm-up, linear decay), maximum length, on the CPU:

- tfbert: `tfbert.finetuning.distillation.distill` (what `tfbert distill` runs).
- sentence-transformers: `SentenceTransformerTrainer` with `MSELoss` on the teacher's embeddings.

Reported: translation retrieval accuracy (top-1 by cosine over the held-out pairs, both ways) of the
student before and after, and the MSE of the Spanish embeddings against the teacher's English ones.

    nice -n 19 python benchmarks/distillation_quality.py [--train 3200] [--eval 500] [--batch-size 32]
"""

from __future__ import annotations

import sys


import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402

from sentence_embeddings_common import bible_pairs, machine, minilm_folder, sentence_transformer  # noqa: E402
from tfbert.metrics import translation_accuracy, unit_rows  # noqa: E402


def scores(embed, teacher_eval: np.ndarray, english: list[str], spanish: list[str]) -> dict[str, float]:
    source, target = embed(english), embed(spanish)
    forward, backward = translation_accuracy(source, target)
    return {"en->es": forward, "es->en": backward, "mse": float(np.mean(np.square(target - teacher_eval)))}


def tfbert_run(train, evaluation, args) -> tuple[dict, dict, float]:
    from tfbert.tasks import load_text_embedder
    from tfbert.finetuning.distillation import distill
    from tfbert.text import WordPieceTokenizer

    folder = minilm_folder()
    teacher = load_text_embedder(folder, max_length=args.max_length)
    english, spanish = map(list, zip(*evaluation))
    teacher_eval = unit_rows(teacher.embed(english))
    before = scores(teacher.embed, teacher_eval, english, spanish)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as model_dir:
        result = distill(teacher, folder, WordPieceTokenizer(folder / "vocab.txt"), [en for en, _ in train],
                         [es for _, es in train], model_dir, eval_sources=english, eval_targets=spanish,
                         max_length=args.max_length, epochs=1, batch_size=args.batch_size,
                         learning_rate=args.learning_rate, strategy="cpu", seed=0)
        minutes = (time.perf_counter() - start) / 60
        student = load_text_embedder(model_dir)
        after = scores(student.embed, teacher_eval, english, spanish)
    print(f"tfbert: best epoch scores {result.best_scores}", flush=True)
    return before, after, minutes


def sentence_transformers_run(train, evaluation, args) -> tuple[dict, dict, float]:
    import datasets
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer import losses

    teacher = sentence_transformer(minilm_folder(), args.max_length)
    student = sentence_transformer(minilm_folder(), args.max_length)
    english, spanish = map(list, zip(*evaluation))

    def embed(model):
        return lambda texts: model.encode(texts, batch_size=64, convert_to_numpy=True)

    teacher_eval = embed(teacher)(english)
    before = scores(embed(student), teacher_eval, english, spanish)
    labels = embed(teacher)([en for en, _ in train])
    data = datasets.Dataset.from_dict({"english": [en for en, _ in train], "non_english": [es for _, es in train],
                                       "label": labels.tolist()})
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as output_dir:
        arguments = SentenceTransformerTrainingArguments(
            output_dir=output_dir, per_device_train_batch_size=args.batch_size, num_train_epochs=1,
            learning_rate=args.learning_rate, warmup_steps=0.1, weight_decay=0.01, use_cpu=True, report_to="none",
            save_strategy="no", logging_strategy="no", seed=0)
        SentenceTransformerTrainer(model=student, args=arguments, train_dataset=data,
                                   loss=losses.MSELoss(student)).train()
    minutes = (time.perf_counter() - start) / 60
    return before, scores(embed(student), teacher_eval, english, spanish), minutes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", type=int, default=3200, help="training pairs (steps = train / batch size)")
    parser.add_argument("--eval", type=int, default=500, help="held-out pairs for retrieval")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--only", choices=["tfbert", "sentence-transformers"], help="run one side only")
    parser.add_argument("--torch-threads", type=int, help="torch.set_num_threads (default: torch's own choice)")
    args = parser.parse_args()
    import torch

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    pairs = bible_pairs(args.train + args.eval)
    train, evaluation = pairs[:args.train], pairs[args.train:]
    print(f"{machine()}; {len(train)} training pairs ({len(train) // args.batch_size} steps of {args.batch_size}), "
          f"{len(evaluation)} held-out pairs, lr {args.learning_rate}, max length {args.max_length}", flush=True)
    runs = {"tfbert distill": tfbert_run, "sentence-transformers MSELoss": sentence_transformers_run}
    rows = {name: run(train, evaluation, args) for name, run in runs.items() if args.only in (None, name.split()[0])}
    print("| system | en->es before | es->en before | en->es after | es->en after | MSE after | training min |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (before, after, minutes) in rows.items():
        print(f"| {name} | {before['en->es']:.3f} | {before['es->en']:.3f} | {after['en->es']:.3f} | "
              f"{after['es->en']:.3f} | {after['mse']:.2e} | {minutes:.1f} |")


if __name__ == "__main__":
    main()
