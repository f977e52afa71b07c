"""Conversion time of a BERT-base size TF1 release: `tfbert convert tf1 FOLDER -o OUT.keras [--heads]`.

Writes a Google-layout release folder (`bert_config.json` of BERT-base, `bert_model.ckpt.*` under
the original variable names, a 30,522-token `vocab.txt`) from a random-initialised
`BertForPreTraining`, then times the whole command in this process, `--repeats` times, with and
without the heads, and prints a table: reading the checkpoint and building the model with its
weights, writing the `.keras` file and the tokenizer, the total, and the CPU time of the total.

    python benchmarks/convert_tf1.py                  # BERT-base: 12 layers, hidden 768
    python benchmarks/convert_tf1.py --repeats 5 --folder /tmp/uncased_L-12_H-768_A-12
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "convert")]

BERT_BASE = dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2)


def write_release(folder: Path) -> float:
    """A random BERT-base release in Google's layout; returns the checkpoint's size in MB."""
    import torch
    import transformers
    from tf1_releases import bert_tensors, write_checkpoint, write_json, write_vocab

    torch.manual_seed(0)
    model = transformers.BertForPreTraining(transformers.BertConfig(**BERT_BASE, hidden_act="gelu_new"))
    folder.mkdir(parents=True, exist_ok=True)
    write_checkpoint(folder / "bert_model.ckpt", bert_tensors(model, BERT_BASE["num_hidden_layers"]))
    write_json(folder / "bert_config.json", {**BERT_BASE, "hidden_act": "gelu"})
    write_vocab(folder / "vocab.txt", BERT_BASE["vocab_size"])
    return sum(path.stat().st_size for path in folder.glob("bert_model.ckpt.*")) / 1e6


def time_conversion(folder: Path, output: Path, heads: bool) -> dict[str, float]:
    """Wall-clock seconds spent reading + building, writing, and in all (what `tfbert convert tf1` does),
    and the process's CPU seconds in all (less sensitive to a busy machine than wall-clock)."""
    from tfbert.convert.tf1 import read_release, release_tokenizer
    from tfbert.convert.writing import save_converted

    start, cpu = time.perf_counter(), time.process_time()
    release = read_release(folder)
    tokenizer = release_tokenizer(release)
    model = release.build_model(heads=heads)
    built = time.perf_counter()
    save_converted(model, output, tokenizer)
    done = time.perf_counter()
    return {"read + build": built - start, "write": done - built, "total": done - start,
            "cpu": time.process_time() - cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, help="where to write the release (default: a temporary folder)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp())
    folder = args.folder or root / "uncased_L-12_H-768_A-12"
    size = write_release(folder)
    print(f"release {folder}: checkpoint {size:.0f} MB")
    print("| heads | run | read + build (s) | write .keras + tokenizer (s) | total (s) | CPU time (s) |")
    print("|---|---|---|---|---|---|")
    for repeat in range(args.repeats):
        for heads in (False, True):
            seconds = time_conversion(folder, root / f"out{repeat}{heads}" / "model.keras", heads)
            print(f"| {'yes' if heads else 'no'} | {repeat + 1} | {seconds['read + build']:.2f} | "
                  f"{seconds['write']:.2f} | {seconds['total']:.2f} | {seconds['cpu']:.2f} |")


if __name__ == "__main__":
    main()
