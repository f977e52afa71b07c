"""float32 against mixed_bfloat16, in one process with alternating rounds: training and serving.

- Training: BERT-small MLM + NSP train steps (XLA, Adam, length 128; `throughput_common.tfbert_step`),
  steps/s.
- The same training step of keras-hub's `BertMaskedLM` (MLM only) under the same policies, beside it.
- Serving: all-MiniLM-L6-v2 sentence embeddings (mean pooling) exported as a SavedModel that takes
  raw strings (`export_saved_model`, texts packed to 128 pieces), called on Botchan lines, sentences/s.

Each model is built once under each policy (the Keras global policy set before building) with the same
weights; the rounds then alternate fp32, bf16, fp32, bf16... The table gives medians, the cosine of the
bf16 outputs to the fp32 ones (encoder outputs for training, embeddings for serving), and the share of
this machine's matmul peak in that dtype (`tfbert.distribute.peaks`, 2048-square, measured in every
round, the best kept) that the matmul FLOPs reach (serving counts the encoder at the batch's longest
text, which is where the export trims the batch).

    python benchmarks/precision.py [--rounds 2] [--steps 3] [--batch-size 4] [--serve-batch 8]
"""

from __future__ import annotations

import sys

# Run as a script, this file's folder comes first on sys.path, where benchmarks/tokenize.py would
# shadow the standard library's `tokenize` module; drop it.
if sys.path and sys.path[0] and __file__.startswith(sys.path[0]):
    sys.path.pop(0)

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
sys.path.append(str(ROOT / "benchmarks"))   # after the standard library, which has its own `tokenize`

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from assets import asset  # noqa: E402
from throughput_common import LENGTH, make_batch, matmul_flops  # noqa: E402

from tfbert.config import load_config  # noqa: E402
from tfbert.distribute.peaks import MatmulPeaks, cpu_bf16_flags, describe_cpu_bf16, measure_matmul_peaks  # noqa: E402
from tfbert.distribute.precision import apply_precision  # noqa: E402
from tfbert.models.pretraining import PretrainingModel  # noqa: E402

POLICIES = ("float32", "mixed_bfloat16")
TRAIN_CONFIG = "bert_small"


def cosine(actual: np.ndarray, expected: np.ndarray) -> float:
    """Smallest cosine between matching rows (last axis) of two arrays."""
    actual, expected = actual.reshape(-1, actual.shape[-1]), expected.reshape(-1, expected.shape[-1])
    return float(np.min(np.sum(actual * expected, -1)
                        / np.linalg.norm(actual, axis=-1) / np.linalg.norm(expected, axis=-1)))


def training_models(batch: dict[str, np.ndarray]):
    """{policy: (one train step, the encoder's sequence output before training)} with the same initial weights."""
    inputs = {name: batch[name] for name in ("token_ids", "segment_ids", "padding_mask", "masked_positions")}
    features = {name: batch[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    steps, outputs, weights = {}, {}, None
    for policy in POLICIES:
        apply_precision(policy)
        model = PretrainingModel(load_config(TRAIN_CONFIG))
        model(inputs)
        weights = weights or model.get_weights()
        model.set_weights(weights)
        outputs[policy] = np.asarray(keras.ops.cast(model.encoder(features)["sequence_output"], "float32"))
        model.compile(optimizer=keras.optimizers.Adam(1e-4), jit_compile=True)
        labels = {"masked_ids": batch["masked_ids"], "masked_weights": batch["masked_weights"],
                  f"{model.pair_objective}_labels": batch["pair_labels"]}
        steps[policy] = lambda model=model, labels=labels: model.train_on_batch(inputs, labels)
    return steps, outputs


def keras_hub_steps(batch: dict[str, np.ndarray]):
    """{policy: one keras-hub BertMaskedLM train step} of the same config, or {} where keras-hub is absent."""
    try:
        from train_throughput import keras_hub_step
    except ImportError:
        return {}
    steps = {}
    for policy in POLICIES:
        apply_precision(policy)
        steps[policy] = keras_hub_step(TRAIN_CONFIG, batch)
    return steps


def serving_models(directory: str):
    """{policy: strings -> float32 embeddings} of all-MiniLM-L6-v2 exported under each policy."""
    from tfbert.convert.huggingface import load_huggingface
    from tfbert.export import export_saved_model
    from tfbert.tasks import SentenceEmbedder
    from tfbert.text import WordPieceTokenizer

    checkpoint = asset("minilm")
    embedders = {}
    for policy in POLICIES:
        apply_precision(policy)
        model = SentenceEmbedder(load_huggingface(checkpoint), pooling="mean")
        path = export_saved_model(model, f"minilm_{policy}", tokenizer=WordPieceTokenizer(checkpoint / "vocab.txt"),
                                  output_dir=directory, sequence_length=LENGTH)
        signature = tf.saved_model.load(str(path)).signatures["serving_default"]
        embedders[policy] = lambda texts, signature=signature: tf.cast(
            signature(text=tf.constant(texts))["embedding"], tf.float32).numpy()
    apply_precision("float32")
    return embedders


def serving_flops(texts: list[str]) -> float:
    """Matmul FLOPs of MiniLM-L6's encoder forward on `texts`: the export trims the batch to its longest text."""
    from tfbert.text import WordPieceTokenizer

    fields = json.loads(asset("minilm/config.json").read_text())
    hidden, inner, layers = fields["hidden_size"], fields["intermediate_size"], fields["num_hidden_layers"]
    pieces = WordPieceTokenizer(asset("minilm/vocab.txt")).tokenize(tf.constant(texts))
    length = min(int(tf.reduce_max(pieces.row_lengths())) + 2, LENGTH)   # [CLS] ... [SEP]
    per_position = 4 * hidden * hidden + 2 * hidden * inner + 2 * length * hidden
    return 2.0 * len(texts) * length * layers * per_position


def botchan_lines(count: int) -> list[str]:
    lines = [line.strip() for line in asset("text/botchan.txt").read_text(encoding="utf-8").splitlines()]
    lines = [line for line in lines if len(line) > 40]
    return (lines * (count // len(lines) + 1))[:count]


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3, help="timed training steps per policy and round")
    parser.add_argument("--batch-size", type=int, default=4, help="training batch (sequences of 128)")
    parser.add_argument("--serve-batch", type=int, default=8, help="strings per serving call")
    parser.add_argument("--serve-calls", type=int, default=2, help="timed serving calls per policy and round")
    args = parser.parse_args()

    batch = make_batch(load_config(TRAIN_CONFIG).encoder.vocab_size, args.batch_size)
    steps, outputs = training_models(batch)
    hub_steps = keras_hub_steps(batch)
    texts = botchan_lines(args.serve_batch)
    with tempfile.TemporaryDirectory() as directory:
        embedders = serving_models(directory)
        embeddings = {policy: embed(texts) for policy, embed in embedders.items()}   # warm-up too
        for step in [*steps.values(), *hub_steps.values()]:
            step()   # XLA compilation
        peaks = []
        step_times = {policy: [] for policy in POLICIES}
        hub_times = {policy: [] for policy in hub_steps}
        serve_times = {policy: [] for policy in POLICIES}
        for _ in range(args.rounds):
            measure_matmul_peaks.cache_clear()
            peaks.append(measure_matmul_peaks(size=2048))   # each round: the machine is shared
            for policy in POLICIES:
                step_times[policy] += [timed(steps[policy]) for _ in range(args.steps)]
                serve_times[policy] += [timed(lambda: embedders[policy](texts)) for _ in range(args.serve_calls)]
                if hub_steps:
                    hub_times[policy] += [timed(hub_steps[policy]) for _ in range(args.steps)]
    best = MatmulPeaks(max(peak.float32 for peak in peaks), max(peak.bfloat16 for peak in peaks))
    report(args, texts, best, step_times, hub_times, serve_times, cosine(outputs["mixed_bfloat16"], outputs["float32"]),
           cosine(embeddings["mixed_bfloat16"], embeddings["float32"]))


def report(args, texts, peaks, step_times, hub_times, serve_times, train_cosine: float, serve_cosine: float) -> None:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.machine()) if Path("/proc/cpuinfo").exists() else ""
    print(f"# {model}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, TF {tf.__version__}, "
          f"Keras {keras.__version__}; {describe_cpu_bf16(cpu_bf16_flags())}")
    print(f"# matmul peaks (TensorFlow, 2048 square, best over the rounds): {peaks.describe()}")
    peak = {"float32": peaks.float32, "mixed_bfloat16": peaks.bfloat16}
    train_flops = matmul_flops(TRAIN_CONFIG, args.batch_size, "tfbert")
    serve_flops = serving_flops(texts)
    print("| workload | policy | per s | vs fp32 | cosine to fp32 | share of the dtype's matmul peak |")
    print("|---|---|---:|---:|---:|---:|")
    rows = [(f"{TRAIN_CONFIG} MLM+NSP train, batch {args.batch_size}", step_times, train_flops, "steps",
             f"{train_cosine:.5f}")]
    if hub_times:
        rows.append((f"keras-hub BertMaskedLM {TRAIN_CONFIG} train, batch {args.batch_size}", hub_times,
                     matmul_flops(TRAIN_CONFIG, args.batch_size, "keras_hub"), "steps", "-"))
    rows.append((f"MiniLM-L6 SavedModel strings->embeddings, batch {args.serve_batch}", serve_times, serve_flops,
                 "sentences", f"{serve_cosine:.5f}"))
    for name, times, flops, unit, similarity in rows:
        rates = {policy: (1 if unit == "steps" else args.serve_batch) / statistics.median(times[policy])
                 for policy in POLICIES}
        for policy in POLICIES:
            per_call = rates[policy] if unit == "steps" else rates[policy] / args.serve_batch
            share = flops * per_call / 1e9 / peak[policy]
            print(f"| {name} | {policy} | {rates[policy]:.3f} {unit} | {rates[policy] / rates['float32']:.2f}x | "
                  f"{'1' if policy == 'float32' and similarity != '-' else similarity} | {share:.0%} |")


if __name__ == "__main__":
    main()
