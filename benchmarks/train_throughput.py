"""Masked-LM training throughput: tfbert beside keras-hub and Hugging Face (PyTorch), same batches, one run.

    python benchmarks/train_throughput.py                    # BERT-small and ALBERT-base, CPU
    python benchmarks/train_throughput.py --steps 10 --batch-size 32

Every framework trains the same configuration (tfbert's `bert_small` and
`albert_base` configs) on the same random batches of length 128 with 20 masked
positions, with Adam, dropout as configured, float32 on the CPU. Keras models
compile their train step with XLA (`jit_compile=True`), PyTorch runs eagerly.
tfbert also trains its NSP/SOP head; keras-hub's `*MaskedLM` and Hugging Face's
`*ForMaskedLM` train MLM only, so tfbert does slightly more work per step.
Hugging Face's `*ForMaskedLM` computes logits at every position, the others only
at the masked ones; tfbert also runs its last layer only at the masked positions
and the first token. Each measurement runs in its own process. Prints sequences
per second (median of the timed steps), tfbert's ratios, and each framework's
share of this machine's matmul peak: the step's matmul FLOPs (counted from the
config: forward, times 3 for the backward pass) per second, over the FLOP/s of
one large XLA-compiled float32 matmul measured in the same run.
"""

from __future__ import annotations

import sys
from pathlib import Path

# benchmarks/tokenize.py would shadow the standard library's tokenize: look here last.
_HERE = str(Path(__file__).resolve().parent)
sys.path = [entry for entry in sys.path if entry not in (_HERE, "")] + [_HERE]

import argparse
import os
import platform
import subprocess

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from tfbert.config import load_config  # noqa: E402
from throughput_common import (LENGTH, PREDICTIONS, make_batch, matmul_flops, seconds,  # noqa: E402
                               tfbert_step, time_steps)


def measured_matmul_peak() -> float:
    """FLOP/s of a [2048, 768] x [768, 3072] float32 matmul compiled by XLA, the best of 20."""
    a, b = tf.random.normal([2048, 768]), tf.random.normal([768, 3072])
    matmul = tf.function(tf.matmul, jit_compile=True)
    matmul(a, b).numpy()
    best = min(seconds(lambda: matmul(a, b).numpy()) for _ in range(20))
    return 2 * 2048 * 768 * 3072 / best


def keras_hub_step(config_name: str, batch: dict):
    import keras_hub

    encoder = load_config(config_name).encoder
    common = dict(vocabulary_size=encoder.vocab_size, num_layers=encoder.num_layers, num_heads=encoder.num_heads,
                  hidden_dim=encoder.hidden_size, intermediate_dim=encoder.intermediate_size,
                  max_sequence_length=encoder.max_positions, num_segments=encoder.type_vocab_size)
    if config_name.startswith("albert"):
        backbone = keras_hub.models.AlbertBackbone(embedding_dim=encoder.embedding_size,
                                                   dropout=encoder.dropout_rate, **common)
        model = keras_hub.models.AlbertMaskedLM(backbone)
    else:
        backbone = keras_hub.models.BertBackbone(dropout=encoder.dropout_rate, **common)
        model = keras_hub.models.BertMaskedLM(backbone)
    model.compile(optimizer=keras.optimizers.Adam(1e-4), jit_compile=True,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), weighted_metrics=[])
    inputs = {"token_ids": batch["token_ids"], "segment_ids": batch["segment_ids"],
              "padding_mask": batch["padding_mask"], "mask_positions": batch["masked_positions"]}
    return lambda: model.train_on_batch(inputs, batch["masked_ids"], sample_weight=batch["masked_weights"])


def huggingface_step(config_name: str, batch: dict):
    import torch
    import transformers

    from tfbert.convert.huggingface import huggingface_config

    torch.set_num_threads(os.cpu_count() or 1)
    hf = huggingface_config(load_config(config_name))
    model_type = hf.pop("model_type")
    if model_type == "albert":
        model = transformers.AlbertForMaskedLM(transformers.AlbertConfig(**hf))
    else:
        model = transformers.BertForMaskedLM(transformers.BertConfig(**hf))
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    labels = np.full((len(batch["token_ids"]), LENGTH), -100, "int64")
    np.put_along_axis(labels, batch["masked_positions"].astype("int64"), batch["masked_ids"].astype("int64"), axis=1)
    tensors = dict(input_ids=torch.tensor(batch["token_ids"], dtype=torch.long),
                   token_type_ids=torch.tensor(batch["segment_ids"], dtype=torch.long),
                   attention_mask=torch.tensor(batch["padding_mask"], dtype=torch.long),
                   labels=torch.tensor(labels))

    def step():
        optimizer.zero_grad()
        model(**tensors).loss.backward()
        optimizer.step()

    return step


FRAMEWORKS = {"tfbert": tfbert_step, "keras-hub": keras_hub_step, "hf": huggingface_step}


def measure_in_subprocess(framework: str, config_name: str, args: argparse.Namespace) -> float:
    """Each framework runs in a fresh process, so no thread pools of another framework compete with it."""
    command = [sys.executable, __file__, "--measure", framework, "--configs", config_name,
               "--batch-size", str(args.batch_size), "--steps", str(args.steps), "--warmup", str(args.warmup)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{framework} on {config_name} failed:\n{result.stderr[-3000:]}")
    return float(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["bert_small", "albert_base"])
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--measure", choices=sorted(FRAMEWORKS), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.measure:
        (config_name,) = args.configs
        batch = make_batch(load_config(config_name).encoder.vocab_size, args.batch_size)
        print(time_steps(FRAMEWORKS[args.measure](config_name, batch), args.steps, args.warmup, args.batch_size))
        return

    peak = measured_matmul_peak()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, TF {tf.__version__}, "
          f"Keras {keras.__version__} ({keras.backend.backend()}), batch {args.batch_size} x length {LENGTH}, "
          f"{PREDICTIONS} predictions, median of {args.steps} steps after {args.warmup} warm-up; "
          f"measured float32 matmul peak {peak / 1e9:.0f} GFLOP/s")
    print("| model | tfbert seq/s | keras-hub seq/s | HF PyTorch seq/s | tfbert / keras-hub | tfbert / HF "
          "| share of matmul peak: tfbert, keras-hub, HF |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for config_name in args.configs:
        rates = {framework: measure_in_subprocess(framework, config_name, args) for framework in FRAMEWORKS}
        shares = ", ".join(f"{rate / args.batch_size * matmul_flops(config_name, args.batch_size, name) / peak:.0%}"
                           for name, rate in rates.items())
        print(f"| {config_name} | {rates['tfbert']:.1f} | {rates['keras-hub']:.1f} | {rates['hf']:.1f} | "
              f"{rates['tfbert'] / rates['keras-hub']:.2f}x | {rates['tfbert'] / rates['hf']:.2f}x | {shares} |",
              flush=True)


if __name__ == "__main__":
    main()
