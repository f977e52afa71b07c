"""Time to the first training step of each training command, tiny and base models, on the CPU.

Each command runs in a fresh process as a user runs it and prints its own clock (`time to first
step ... s; ... steps/s ...`, from process start: imports, data, model, compilation, first step):

- pretrain: `bert_tiny` / `bert_base` from scratch and MiniLM (all-MiniLM-L6-v2, the test
  assets) further pretrained (`--init-from`, MLM), on the Lee news corpus;
- finetune: classification of Pang & Lee polarity sentences from the tiny / base pretraining
  runs above and from MiniLM;
- distill: MiniLM into itself on English-English pairs (distillation needs equal widths).

Batch 8, length 64, a few steps. Folders go to a temporary directory, deleted at the end.
`--autograph` runs every command twice in a row, with AutoGraph rewriting tfbert's functions
(`TFBERT_AUTOGRAPH=convert`, as before `tfbert/graph_code.py`) and without (the default), and adds the ratio.

    python benchmarks/first_step.py [--sizes tiny base] [--steps 20] [--autograph]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the checkout: benchmarks.lab

import argparse  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from benchmarks.lab.assets import asset  # noqa: E402

CLOCK = re.compile(r"time to first step ([\d.]+) s(?:; ([\d.]+) steps/s)?")
COMMON = ["--batch-size", "8", "--seed", "0"]


def run(arguments: list[str], environment: dict[str, str] | None = None) -> tuple[float, float]:
    """(time to the first step, steps/s after it) printed by `tfbert ARGUMENTS`."""
    done = subprocess.run([sys.executable, "-m", "tfbert.cli", *arguments], capture_output=True, text=True,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(environment or {})})
    found = CLOCK.search(done.stdout)
    if done.returncode or not found:
        raise RuntimeError(f"tfbert {' '.join(arguments)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return float(found.group(1)), float(found.group(2) or "nan")


def classification_files(folder: Path) -> tuple[Path, Path]:
    """Pang & Lee polarity sentences as train/dev TSV files (sentence, label)."""
    rows = []
    for line in asset("labelled/pang_lee_polarity.cor").read_text(encoding="cp1252", errors="replace").splitlines():
        label, _, text = line.partition(" ")
        if text.strip():
            rows.append(f"{text.strip()}\t{int(label == '__label__pos')}")
    train, dev = folder / "train.tsv", folder / "dev.tsv"
    train.write_text("sentence\tlabel\n" + "\n".join(rows[:400]) + "\n", encoding="utf-8")
    dev.write_text("sentence\tlabel\n" + "\n".join(rows[-100:]) + "\n", encoding="utf-8")
    return train, dev


def parallel_file(folder: Path) -> Path:
    lines = [line.strip() for line in asset("text/lee_background.cor").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    path = folder / "pairs.tsv"
    sentences = [sentence for line in lines for sentence in line.split(". ") if len(sentence) > 20][:300]
    path.write_text("\n".join(f"{s}\t{s.lower()}" for s in sentences) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["tiny", "base"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--autograph", action="store_true", help="also run each command with TFBERT_AUTOGRAPH=convert")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="first_step-"))
    minilm, corpus = str(asset("minilm")), str(asset("text/lee_background.cor"))
    train, dev = classification_files(folder)
    pretraining = ["--data", corpus, "--steps", str(args.steps), "--checkpoint-every", str(args.steps),
                   "--sequence-length", "64", *COMMON]
    finetuning = ["--train", str(train), "--eval", str(dev), "--epochs", "1", "--max-length", "64", *COMMON]
    jobs = []
    for size in args.sizes:
        run_dir = folder / f"pretrain-{size}"
        jobs.append((f"pretrain bert_{size}", ["pretrain", "--config", f"bert_{size}", "--tokenizer", minilm,
                                               "--model-dir", str(run_dir), *pretraining]))
        jobs.append((f"finetune bert_{size}", ["finetune", "--pretrained", str(run_dir),
                                               "--model-dir", str(folder / f"finetune-{size}"), *finetuning]))
    jobs += [
        ("pretrain --init-from MiniLM", ["pretrain", "--init-from", minilm, "--objectives", "mlm",
                                         "--model-dir", str(folder / "further"), *pretraining]),
        ("finetune MiniLM", ["finetune", "--pretrained", minilm, "--model-dir", str(folder / "finetune-minilm"),
                             *finetuning]),
        ("distill MiniLM -> MiniLM", ["distill", "--teacher", minilm, "--student", minilm, "--parallel",
                                      str(parallel_file(folder)), "--epochs", "1", "--max-length", "64",
                                      "--model-dir", str(folder / "distill"), *COMMON]),
    ]
    rows = []
    try:
        for name, arguments in jobs:
            if args.autograph:
                shutil.rmtree(folder / "convert", ignore_errors=True)
                converted, _ = run(_elsewhere(arguments, folder), {"TFBERT_AUTOGRAPH": "convert"})
            seconds, rate = run(arguments)
            rows.append((name, seconds, rate, converted if args.autograph else None))
            print(f"{name}: {seconds:.1f} s, {rate:.2f} steps/s", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print_table(rows)


def _elsewhere(arguments: list[str], folder: Path) -> list[str]:
    """`arguments` with the `--model-dir` under `folder/convert`: the same command, a run of its own."""
    at = arguments.index("--model-dir") + 1
    return [*arguments[:at], str(folder / "convert" / Path(arguments[at]).name), *arguments[at + 1:]]


def print_table(rows: list[tuple[str, float, float, float | None]]) -> None:
    with_autograph = rows and rows[0][3] is not None
    if with_autograph:
        print("| command | time to first step, AutoGraph on tfbert (s) | without (s) | ratio | steps/s after it |")
        print("|---|---|---|---|---|")
    else:
        print("| command | time to first step (s) | steps/s after it |")
        print("|---|---|---|")
    for name, seconds, rate, converted in rows:
        if with_autograph:
            print(f"| {name} | {converted:.1f} | {seconds:.1f} | {converted / seconds:.2f}x | {rate:.2f} |")
        else:
            print(f"| {name} | {seconds:.1f} | {rate:.2f} |")


if __name__ == "__main__":
    main()
