"""Masked-LM training on one accelerator with Keras' JAX backend: sequences/s and the share of the chip's bf16 peak.

    python benchmarks/gpu_jax_throughput.py                       # bert_base, bert_large at 128 and 512
    python benchmarks/gpu_jax_throughput.py --peak-tflops 989     # a chip the peak table lacks
    python benchmarks/gpu_jax_throughput.py --quick               # a dry run: bert_tiny, tiny batches, any device

For a GPU (or TPU) machine with JAX and no TensorFlow: it imports no TensorFlow (tfbert's configs and models
are `keras.ops` only; `tests/benchmarks/test_gpu_jax_throughput.py` runs `--quick` with TensorFlow made
unimportable). Each model trains masked-LM alone (`spec.build_pretraining_model(config, ("mlm",))`, dropout as
configured) on synthetic batches: random token ids, no padding, BERT's masked positions per sequence (20 at
length 128, 80 at 512), AdamW, under the Keras policy `mixed_bfloat16` (float32 variables, bfloat16 matmuls),
with Keras' own `model.fit` (the train step compiled by XLA). A first `fit` of `--warmup` steps compiles; a
second `fit` of `--steps` steps is timed whole (its end waits for the last step): sequences/s = steps x batch /
seconds. The FLOPs are counted from the config, as tfbert computes them (printed under the table): every
matmul's multiply-adds x 2 (forward) x 3 (forward and backward: the backward pass does two matmuls for each of
the forward's), including the attention scores and weighted values, and counting only what runs (the last layer
and the MLM head at the masked positions, `Encoder.encode_at_positions`). The share of peak is that FLOP rate
over the chip's dense bf16 peak (`PEAKS`, by device name; `--peak-tflops` overrides). Issue 42's goal: 45%.
"""

from __future__ import annotations

import os
import sys

# The checkout, where `benchmarks.lab` (the report table) lives.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("KERAS_BACKEND", "jax")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

from benchmarks.lab.report import Table  # noqa: E402

# Dense bf16 tensor-core / MXU peaks in TFLOP/s (vendor data sheets, without sparsity), by a piece of the device
# name JAX reports (`device_kind`); the first piece found in the name wins, so the specific ones come first.
PEAKS = (("H200", 989.0), ("H100 PCIe", 756.0), ("H100", 989.0), ("GH200", 989.0), ("B200", 2250.0),
         ("A100", 312.0), ("L40S", 362.0), ("L4", 121.0), ("A10G", 70.0), ("TPU v6", 918.0), ("TPU v5p", 459.0),
         ("TPU v5 lite", 197.0), ("TPU v5e", 197.0), ("TPU v4", 275.0))
# BERT's max_predictions_per_seq at its two pretraining lengths; other lengths mask 15%.
PREDICTIONS = {128: 20, 512: 80}
# Sequences per batch by (config, length): what fits an 80 GB chip with room.
BATCHES = {("bert_base", 128): 256, ("bert_base", 512): 64, ("bert_large", 128): 128, ("bert_large", 512): 32}
QUICK = {"configs": ["bert_tiny"], "lengths": [32], "batch_size": 2, "steps": 2, "warmup": 1}
FORMULA = ("FLOPs/step = 6 x batch x [layers x length x 3H^2 + ((layers - 1) x length + P + 1) x (H^2 + 2HI + "
           "2 x length x H) + P x (H x E + E x V) (+ length x E x H where E != H)]: the query/key/value projection "
           "at every position, the output projection, feed-forward and the attention scores and weighted values "
           "(2 x length x H multiply-adds a query) at every query (the last layer's only at the P masked positions "
           "and the first), the MLM head's transform and tied decoder at the P masked positions; H hidden, "
           "I intermediate, E embedding, V vocabulary; 6 = 2 FLOPs a multiply-add x 3 for forward and backward.")


def predictions(length: int) -> int:
    """Masked positions per sequence: BERT's 20 at 128 and 80 at 512, else 15% rounded up."""
    return PREDICTIONS.get(length, math.ceil(0.15 * length))


def step_flops(encoder, batch_size: int, length: int) -> float:
    """FLOPs of one MLM training step of an encoder config (`FORMULA`)."""
    hidden, inner, layers = encoder.hidden_size, encoder.intermediate_size, encoder.num_layers
    embedding, masked = encoder.embedding_size or hidden, predictions(length)
    per_query = hidden * hidden + 2 * hidden * inner + 2 * length * hidden
    macs = layers * length * 3 * hidden * hidden + ((layers - 1) * length + masked + 1) * per_query
    macs += masked * (hidden * embedding + embedding * encoder.vocab_size)
    macs += length * embedding * hidden if embedding != hidden else 0
    return 6.0 * batch_size * macs


def peak_tflops(device_kind: str, override: float | None) -> float | None:
    """The chip's dense bf16 peak: `override`, else the first `PEAKS` entry whose name is in `device_kind`."""
    if override is not None:
        return override
    return next((peak for name, peak in PEAKS if name.lower() in device_kind.lower()), None)


def synthetic_batches(vocab_size: int, batch_size: int, length: int, steps: int, seed: int = 0):
    """(inputs, labels) of `steps` batches: random ids, two segments, no padding, sorted masked positions."""
    import numpy as np

    rng, rows, masked = np.random.default_rng(seed), batch_size * steps, predictions(length)
    positions = np.sort(np.argsort(rng.random((rows, length - 1)), axis=1)[:, :masked] + 1, axis=1)
    inputs = {"token_ids": rng.integers(5, vocab_size, (rows, length)).astype("int32"),
              "segment_ids": (np.arange(length)[None, :] >= length // 2).repeat(rows, 0).astype("int32"),
              "padding_mask": np.ones((rows, length), "int32"), "masked_positions": positions.astype("int32")}
    labels = {"masked_ids": rng.integers(5, vocab_size, (rows, masked)).astype("int32"),
              "masked_weights": np.ones((rows, masked), "float32")}
    return inputs, labels


def hlo_flops(model, batch) -> float:
    """XLA's own FLOP count of the train step on `batch`: the cost analysis of its HLO as lowered (before fusion;
    elementwise ops included), a check on `step_flops`."""
    import jax

    state = model._get_jax_state(trainable_variables=True, non_trainable_variables=True, optimizer_variables=True,
                                 metrics_variables=True)
    abstract = jax.tree.map(lambda array: jax.ShapeDtypeStruct(array.shape, array.dtype), (state, batch))
    return float(jax.jit(model.train_step).lower(*abstract).cost_analysis()["flops"])


def sequences_per_second(config_name: str, length: int, batch_size: int, steps: int,
                         warmup: int) -> tuple[float, float]:
    """Train `warmup` steps (compiling), then time `steps` more in one `fit`; sequences/s and `hlo_flops`."""
    import keras

    from tfbert.config import load_config

    config = load_config(config_name)
    keras.utils.set_random_seed(0)
    model = config.spec.build_pretraining_model(config, objectives=("mlm",), dtype="mixed_bfloat16")
    model.compile(optimizer=keras.optimizers.AdamW(1e-4), jit_compile=True)
    vocab = config.encoder.vocab_size
    model.fit(*synthetic_batches(vocab, batch_size, length, warmup), batch_size=batch_size, shuffle=False, verbose=0)
    inputs, labels = synthetic_batches(vocab, batch_size, length, steps, seed=1)
    started = time.perf_counter()
    history = model.fit(inputs, labels, batch_size=batch_size, shuffle=False, verbose=0)
    seconds = time.perf_counter() - started
    if not math.isfinite(history.history["loss"][-1]):
        raise SystemExit(f"{config_name} at length {length}: the loss is not finite")
    batch = tuple({name: values[:batch_size] for name, values in part.items()} for part in (inputs, labels))
    return steps * batch_size / seconds, hlo_flops(model, batch)


def measure(args: argparse.Namespace) -> Table:
    import jax
    import keras

    from tfbert.config import load_config

    if keras.backend.backend() != "jax":
        raise SystemExit(f"KERAS_BACKEND is {keras.backend.backend()!r}; this benchmark runs on JAX (unset it)")
    device = jax.devices()[0]
    peak = peak_tflops(device.device_kind, args.peak_tflops)
    started = time.perf_counter()
    rows = []
    for config_name in args.configs:
        for length in args.lengths:
            batch_size = args.batch_size or BATCHES.get((config_name, length), 32)
            rate, counted_by_xla = sequences_per_second(config_name, length, batch_size, args.steps, args.warmup)
            flops = step_flops(load_config(config_name).encoder, batch_size, length)
            tflops = rate / batch_size * flops / 1e12
            rows.append([config_name, str(length), str(batch_size), f"{rate:,.1f}", f"{rate * length:,.0f}",
                         f"{tflops:.3g}", f"{tflops / peak:.0%}" if peak else "n/a", f"{counted_by_xla / flops:.2f}"])
    source = "--peak-tflops" if args.peak_tflops is not None else "the PEAKS table"
    setup = [f"# {device.device_kind} ({device.platform}, {jax.device_count()} device(s), one used), JAX "
             f"{jax.__version__}, Keras {keras.__version__}, mixed_bfloat16, AdamW, masked-LM only; "
             f"{args.warmup} warm-up steps, {args.steps} timed; bf16 peak "
             + (f"{peak:g} TFLOP/s ({source})" if peak else "unknown: pass --peak-tflops")
             + f"; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]
    notes = [FORMULA, "XLA's FLOPs: the cost analysis of the train step's HLO as lowered (before fusion, elementwise "
             "ops and the optimizer included), over the formula's.",
             f"Total {time.perf_counter() - started:.0f} s. Goal (issue 42): 45% of peak."]
    return Table("Masked-LM training on JAX: sequences/s and share of bf16 peak",
                 ["model", "length", "batch", "sequences/s", "tokens/s", "model TFLOP/s", "share of peak",
                  "XLA's FLOPs / formula"], rows,
                 setup=setup, notes=notes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["bert_base", "bert_large"])
    parser.add_argument("--lengths", nargs="+", type=int, default=[128, 512])
    parser.add_argument("--batch-size", type=int, default=None, help="sequences a batch (default: BATCHES)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (the first compiles)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the chip's dense bf16 peak in TFLOP/s")
    parser.add_argument("--quick", action="store_true", help="a dry run: bert_tiny, length 32, 2 steps of 2")
    args = parser.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    print(measure(args).markdown())


if __name__ == "__main__":
    main()
