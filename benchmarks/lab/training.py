"""Masked-LM training throughput: tfbert beside keras-hub and Hugging Face (PyTorch), same batches.

Every framework trains the same configuration on the same random batches of length 128 with 20
masked positions, with Adam, dropout as configured, float32. Keras models compile their train
step with XLA (`jit_compile=True`), PyTorch runs eagerly. tfbert also trains its NSP/SOP head;
keras-hub's `*MaskedLM` and Hugging Face's `*ForMaskedLM` train MLM only. Each measurement runs
in its own process (`python -m benchmarks.lab.training --measure FRAMEWORK ...`), so no
thread pool of another framework competes with it; the frameworks take turns. The table gives
sequences per second (median of the timed steps), tfbert's ratios, and each framework's share of
this machine's matmul peak (the step's matmul FLOPs per second over the FLOP/s of one large
XLA-compiled float32 matmul measured in the same run).

Example:
    >>> table = measure(["bert_tiny"], batch_size=4, steps=2, warmup=1)  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys

from benchmarks.lab import CHECKOUT, peers
from benchmarks.lab.report import Table
from benchmarks.lab.throughput import LENGTH, PREDICTIONS, make_batch, matmul_flops, tfbert_step
from benchmarks.lab.timing import seconds, time_steps

# framework -> (column name, the peers it needs)
FRAMEWORKS = {"tfbert": ("tfbert", ()), "keras-hub": ("keras-hub", ("keras-hub",)),
              "hf": ("HF PyTorch", ("torch", "transformers"))}


def measured_matmul_peak() -> float:
    """FLOP/s of a [2048, 768] x [768, 3072] float32 matmul compiled by XLA, the best of 20."""
    import tensorflow as tf

    a, b = tf.random.normal([2048, 768]), tf.random.normal([768, 3072])
    matmul = tf.function(tf.matmul, jit_compile=True)
    matmul(a, b).numpy()
    best = min(seconds(lambda: matmul(a, b).numpy()) for _ in range(20))
    return 2 * 2048 * 768 * 3072 / best


def keras_hub_step(config_name: str, batch: dict, jit_compile: bool = True):
    """A call that runs one MLM train step (XLA-compiled by default) of keras-hub's BERT or ALBERT of `config_name`'s
    sizes."""
    import keras
    import keras_hub

    from tfbert.config import load_config

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
    model.compile(optimizer=keras.optimizers.Adam(1e-4), jit_compile=jit_compile,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), weighted_metrics=[])
    inputs = {"token_ids": batch["token_ids"], "segment_ids": batch["segment_ids"],
              "padding_mask": batch["padding_mask"], "mask_positions": batch["masked_positions"]}
    return lambda: model.train_on_batch(inputs, batch["masked_ids"], sample_weight=batch["masked_weights"])


def huggingface_step(config_name: str, batch: dict):
    """A call that runs one eager MLM train step of Hugging Face's PyTorch BERT or ALBERT of the same sizes."""
    import numpy as np
    import torch
    import transformers

    from tfbert.config import load_config
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


STEPS = {"tfbert": tfbert_step, "keras-hub": keras_hub_step, "hf": huggingface_step}


def measure_in_subprocess(framework: str, config_name: str, batch_size: int, steps: int, warmup: int) -> float:
    """Sequences per second of `framework` on `config_name`, measured in a fresh process."""
    command = [sys.executable, "-m", "benchmarks.lab.training", "--measure", framework, "--configs", config_name,
               "--batch-size", str(batch_size), "--steps", str(steps), "--warmup", str(warmup)]
    result = subprocess.run(command, capture_output=True, text=True, check=False, cwd=CHECKOUT)
    if result.returncode != 0:
        raise RuntimeError(f"{framework} on {config_name} failed:\n{result.stderr[-3000:]}")
    return float(result.stdout.strip().splitlines()[-1])


def measure(configs: list[str], batch_size: int, steps: int, warmup: int) -> Table:
    """The training table: a row per config, a column per framework whose peers are installed."""
    import keras
    import tensorflow as tf

    absent = peers.missing(sorted({peer for _, needs in FRAMEWORKS.values() for peer in needs}))
    present = [name for name, (_, needs) in FRAMEWORKS.items() if not set(needs) & set(absent)]
    peak = measured_matmul_peak()
    columns = ["model", *(f"{FRAMEWORKS[name][0]} seq/s" for name in present),
               *(f"tfbert / {FRAMEWORKS[name][0].split()[0]}" for name in present[1:]),
               f"share of matmul peak: {', '.join(FRAMEWORKS[name][0] for name in present)}"]
    table = Table("Masked-LM training throughput", columns, [], setup=[
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, TF {tf.__version__}, "
        f"Keras {keras.__version__} ({keras.backend.backend()}), batch {batch_size} x length {LENGTH}, "
        f"{PREDICTIONS} predictions, median of {steps} steps after {warmup} warm-up; "
        f"measured float32 matmul peak {peak / 1e9:.0f} GFLOP/s"], align="l" + "r" * (len(columns) - 2) + "l")
    for config_name in configs:
        rates = {name: measure_in_subprocess(name, config_name, batch_size, steps, warmup) for name in present}
        shares = ", ".join(f"{rate / batch_size * matmul_flops(config_name, batch_size, name) / peak:.0%}"
                           for name, rate in rates.items())
        table.rows.append([config_name, *(f"{rate:.1f}" for rate in rates.values()),
                           *(f"{rates['tfbert'] / rates[name]:.2f}x" for name in present[1:]), shares])
    table.notes += [peers.skipped_note(peer) for peer in absent]
    return table


def main() -> None:
    """`--measure FRAMEWORK`: print one framework's sequences per second (what `measure_in_subprocess` reads)."""
    from tfbert.config import load_config

    parser = argparse.ArgumentParser(description="one framework's MLM training throughput, in this process")
    parser.add_argument("--measure", choices=sorted(STEPS), required=True)
    parser.add_argument("--configs", nargs=1, required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--warmup", type=int, required=True)
    args = parser.parse_args()
    (config_name,) = args.configs
    batch = make_batch(load_config(config_name).encoder.vocab_size, args.batch_size)
    print(time_steps(STEPS[args.measure](config_name, batch), args.steps, args.warmup, args.batch_size))


if __name__ == "__main__":
    main()
