"""Further pretraining of all-MiniLM-L6-v2 on the CPU: `tfbert pretrain --init-from` beside Hugging Face `Trainer`.

Same weights (the test assets' all-MiniLM-L6-v2), same text (the Lee news corpus, a line an
example), same batch (8) and length (64), MLM with 15% masking (80/10/10):

- tfbert: `tfbert pretrain --init-from MiniLM --objectives mlm --line-by-line`;
- Hugging Face: `BertForMaskedLM.from_pretrained(MiniLM)`, the lines tokenized with truncation,
  `DataCollatorForLanguageModeling`, `Trainer` (CPU, fp32).

Each round runs both, alternating, in fresh processes; each reports its time to the first step
(from process start) and its steps/s after the first step. The table gives the medians and
tfbert's ratio to `Trainer`.

    python benchmarks/further_pretraining.py [--steps 60] [--rounds 2]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the checkout: benchmarks.lab

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from benchmarks.lab.assets import asset  # noqa: E402

BATCH, LENGTH = 8, 64
CLOCK = re.compile(r"time to first step ([\d.]+) s; ([\d.]+) steps/s")


def tfbert_round(steps: int, folder: str) -> tuple[float, float]:
    model_dir = tempfile.mkdtemp(dir=folder)
    command = [sys.executable, "-m", "tfbert.cli", "pretrain", "--init-from", str(asset("minilm")),
               "--objectives", "mlm", "--line-by-line", "--data", str(asset("text/lee_background.cor")),
               "--steps", str(steps), "--checkpoint-every", str(steps), "--batch-size", str(BATCH),
               "--sequence-length", str(LENGTH), "--seed", "0", "--model-dir", model_dir]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    shutil.rmtree(model_dir, ignore_errors=True)
    found = CLOCK.search(done.stdout)
    if not found:
        raise RuntimeError(f"tfbert failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return float(found.group(1)), float(found.group(2))


def huggingface_round(steps: int, folder: str) -> tuple[float, float]:
    done = subprocess.run([sys.executable, __file__, "--huggingface-worker", str(steps), folder],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"Trainer failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["first_step"], result["steps_per_second"]


def huggingface_worker(steps: int, folder: str) -> None:
    """Runs `Trainer` for `steps` steps and prints its clock as JSON (in its own process)."""
    from tfbert.training.progress import process_age

    started = time.perf_counter() - process_age()
    import torch
    from transformers import (BertForMaskedLM, BertTokenizerFast, DataCollatorForLanguageModeling, Trainer,
                              TrainerCallback, TrainingArguments)

    torch.manual_seed(0)
    tokenizer = BertTokenizerFast.from_pretrained(str(asset("minilm")))
    model = BertForMaskedLM.from_pretrained(str(asset("minilm")))
    lines = [line.strip() for line in asset("text/lee_background.cor").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    examples = [{"input_ids": ids} for ids in tokenizer(lines, truncation=True, max_length=LENGTH)["input_ids"]]

    class Clock(TrainerCallback):
        first, begun, seconds = None, 0.0, 0.0

        def on_step_begin(self, args, state, control, **kwargs):
            self.begun = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            now = time.perf_counter()
            if self.first is None:
                self.first = now - started
            else:
                self.seconds += now - self.begun

    clock = Clock()
    arguments = TrainingArguments(output_dir=folder, max_steps=steps, per_device_train_batch_size=BATCH,
                                  learning_rate=5e-5, use_cpu=True, report_to=[], save_strategy="no",
                                  logging_strategy="no", seed=0, dataloader_drop_last=True)
    Trainer(model=model, args=arguments, train_dataset=examples, callbacks=[clock],
            data_collator=DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)).train()
    print(json.dumps({"first_step": clock.first, "steps_per_second": (steps - 1) / clock.seconds}))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--huggingface-worker":
        huggingface_worker(int(sys.argv[2]), sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="further_pretraining-")
    results: dict[str, list[tuple[float, float]]] = {"tfbert": [], "Trainer": []}
    try:
        for round_index in range(args.rounds):
            for name, measure in (("tfbert", tfbert_round), ("Trainer", huggingface_round)):
                results[name].append(measure(args.steps, folder))
                print(f"round {round_index + 1} {name}: first step {results[name][-1][0]:.1f} s, "
                      f"{results[name][-1][1]:.2f} steps/s", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    medians = {name: (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))
               for name, rows in results.items()}
    print("| trainer | time to first step (s) | steps/s after it | steps/s ratio to Trainer |")
    print("|---|---|---|---|")
    for name, (first, rate) in medians.items():
        print(f"| {name} | {first:.1f} | {rate:.2f} | {rate / medians['Trainer'][1]:.2f}x |")


if __name__ == "__main__":
    main()
