"""float32 against mixed_bfloat16, in one process with alternating rounds: training and serving.

- Training: BERT-small MLM + NSP train steps (Adam, length 128; `throughput_common.tfbert_step`), steps/s, each
  policy in the mode tfbert's training driver picks for it (`resolve_jit_compile`): float32 XLA-compiled;
  mixed_bfloat16 on a TPU/GPU XLA-compiled too, on a CPU in graph mode with oneDNN's matmuls and XLA clustering
  only the elementwise ops (`tfbert.distribute.cpu_bfloat16`). mixed_bfloat16 fully XLA-compiled is measured
  beside it for reference.
- The same training step of keras-hub's `BertMaskedLM` (MLM only) under the same policies and modes, beside it.
- Serving: all-MiniLM-L6-v2 sentence embeddings (mean pooling) exported as a SavedModel that takes raw strings
  (`export_saved_model`, texts packed to 128 pieces), called on Botchan lines, sentences/s, with the elementwise
  ops clustered by XLA as `TF_XLA_FLAGS` (`tfbert.xla_flags.SERVING_XLA_FLAGS`) has TF Serving do.

Each model is built once per row (the Keras global policy set before building) with the same weights; the rounds
then alternate the rows. The table gives medians, the cosine of the bf16 outputs to the fp32 ones (encoder outputs
for training, embeddings for serving), the share of this machine's matmul peak in that dtype
(`tfbert.distribute.peaks`, 2048-square, measured in every round, the best kept) that the step's matmul FLOPs reach
over the whole step (serving counts the encoder at the batch's longest text, which is where the export trims the
batch), and, for graph-mode rows, the rate inside the matmul kernels themselves: the FLOPs over the time in which
at least one oneDNN matmul kernel runs (TensorFlow's profiler, 2 steps), as a share of the same peak.

    python benchmarks/precision.py [--rounds 2] [--steps 3] [--batch-size 16] [--serve-batch 64]
"""

from __future__ import annotations

import sys


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
from tfbert.distribute.cpu_bfloat16 import elementwise_clustering, fusible_op_clustering  # noqa: E402
from tfbert.distribute.peaks import MatmulPeaks, cpu_bf16_flags, describe_cpu_bf16, measure_matmul_peaks  # noqa: E402
from tfbert.distribute.precision import apply_precision  # noqa: E402
from tfbert.models.pretraining import PretrainingModel  # noqa: E402
from tfbert.training.driver import resolve_jit_compile  # noqa: E402

POLICIES = ("float32", "mixed_bfloat16")
TRAIN_CONFIG = "bert_small"
MATMUL_KERNELS = ("MatMul", "BatchMatMul")   # TensorFlow's (and oneDNN's _Mkl...) matmul op kernels


def train_modes() -> list[tuple[str, bool]]:
    """(policy, jit_compile) rows: each policy in the mode tfbert's driver picks, then bf16 with XLA for reference."""
    strategy = tf.distribute.get_strategy()
    modes = [(policy, resolve_jit_compile(strategy, "auto", policy)) for policy in POLICIES]
    return modes + [mode for mode in [("mixed_bfloat16", True)] if mode not in modes]


def mode_name(policy: str, jit: bool) -> str:
    return f"{policy}, {'XLA' if jit else 'graph + XLA-fused elementwise'}"


def cosine(actual: np.ndarray, expected: np.ndarray) -> float:
    """Smallest cosine between matching rows (last axis) of two arrays."""
    actual, expected = actual.reshape(-1, actual.shape[-1]), expected.reshape(-1, expected.shape[-1])
    return float(np.min(np.sum(actual * expected, -1)
                        / np.linalg.norm(actual, axis=-1) / np.linalg.norm(expected, axis=-1)))


def warmed(step, policy: str, jit: bool):
    """`step` after its first call, made where tfbert's driver would (clustering on for graph-mode bf16 on CPUs)."""
    with elementwise_clustering(policy, tf.distribute.get_strategy(), jit):
        step()
    return step


def training_steps(batch: dict[str, np.ndarray]):
    """({mode: one train step}, {policy: the encoder's sequence output before training}), same initial weights."""
    inputs = {name: batch[name] for name in ("token_ids", "segment_ids", "padding_mask", "masked_positions")}
    features = {name: batch[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    steps, outputs, weights = {}, {}, None
    for policy, jit in train_modes():
        apply_precision(policy)
        model = PretrainingModel(load_config(TRAIN_CONFIG))
        model(inputs)
        weights = weights or model.get_weights()
        model.set_weights(weights)
        outputs.setdefault(policy, np.asarray(keras.ops.cast(model.encoder(features)["sequence_output"], "float32")))
        model.compile(optimizer=keras.optimizers.Adam(1e-4), jit_compile=jit)
        labels = {"masked_ids": batch["masked_ids"], "masked_weights": batch["masked_weights"],
                  f"{model.pair_objective}_labels": batch["pair_labels"]}
        steps[(policy, jit)] = warmed(lambda model=model, labels=labels: model.train_on_batch(inputs, labels),
                                      policy, jit)
    return steps, outputs


def keras_hub_steps(batch: dict[str, np.ndarray]):
    """{mode: one keras-hub BertMaskedLM train step} of the same config, or {} where keras-hub is absent."""
    try:
        from train_throughput import keras_hub_step
    except ImportError:
        return {}
    steps = {}
    for policy, jit in train_modes():
        apply_precision(policy)
        steps[(policy, jit)] = warmed(keras_hub_step(TRAIN_CONFIG, batch, jit_compile=jit), policy, jit)
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


def matmul_kernel_seconds(call, calls: int = 2) -> float:
    """Seconds per `call()` in which at least one matmul op kernel runs (TensorFlow's profiler, union over threads)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        for _ in range(calls):
            call()
        tf.profiler.experimental.stop()
        space = xplane_pb2.XSpace()
        space.ParseFromString(next(Path(logdir).rglob("*.xplane.pb")).read_bytes())
    intervals = []
    for plane in space.planes:
        for line in plane.lines:
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if any(kernel in name.rpartition(":")[2] for kernel in MATMUL_KERNELS):
                    start = line.timestamp_ns * 1000 + event.offset_ps
                    intervals.append((start, start + event.duration_ps))
    covered, end = 0, 0
    for start, stop in sorted(intervals):
        covered += max(0, stop - max(start, end))
        end = max(end, stop)
    return covered / 1e12 / calls


def encoder_matmul_shapes(batch_size: int) -> list[tuple[str, tuple[int, ...]]]:
    """(name, (batch, m, k, n)) of the encoder layer's forward matmuls at `batch_size` x LENGTH."""
    encoder = load_config(TRAIN_CONFIG).encoder
    hidden, inner, heads = encoder.hidden_size, encoder.intermediate_size, encoder.num_heads
    rows, width = batch_size * LENGTH, hidden // heads
    return [("queries, keys, values", (1, rows, hidden, 3 * hidden)), ("attention output", (1, rows, hidden, hidden)),
            ("feed-forward in", (1, rows, hidden, inner)), ("feed-forward out", (1, rows, inner, hidden)),
            ("attention scores", (batch_size * heads, LENGTH, width, LENGTH)),
            ("attention values", (batch_size * heads, LENGTH, LENGTH, width))]


def shape_rates(batch_size: int) -> list[tuple[str, tuple[int, ...], float]]:
    """Each encoder matmul shape's best bfloat16 rate alone (TensorFlow's oneDNN kernel), GFLOP/s."""
    from tfbert.distribute.peaks import best_rate

    rates = []
    for name, (batch, m, k, n) in encoder_matmul_shapes(batch_size):
        left = tf.cast(tf.random.stateless_normal((batch, m, k), seed=(1, 2)), tf.bfloat16)
        right = tf.cast(tf.random.stateless_normal((batch, k, n), seed=(3, 4)), tf.bfloat16)
        matmul = tf.function(tf.matmul)
        rates.append((name, (batch, m, k, n), best_rate(lambda: matmul(left, right), 2.0 * batch * m * k * n, 5, 5)))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3, help="timed training steps per row and round")
    parser.add_argument("--batch-size", type=int, default=16, help="training batch (sequences of 128)")
    parser.add_argument("--serve-batch", type=int, default=64, help="strings per serving call")
    parser.add_argument("--serve-calls", type=int, default=3, help="timed serving calls per policy and round")
    args = parser.parse_args()

    batch = make_batch(load_config(TRAIN_CONFIG).encoder.vocab_size, args.batch_size)
    tfbert_steps, outputs = training_steps(batch)
    systems = {"tfbert": tfbert_steps, "keras-hub": keras_hub_steps(batch)}
    texts = botchan_lines(args.serve_batch)
    with tempfile.TemporaryDirectory() as directory:
        embedders = serving_models(directory)
        with fusible_op_clustering():   # as TF Serving with SERVING_XLA_FLAGS: the signatures are optimized at their first call
            embeddings = {policy: embed(texts) for policy, embed in embedders.items()}
        peaks = []
        train_times = {(system, mode): [] for system, steps in systems.items() for mode in steps}
        serve_times = {policy: [] for policy in POLICIES}
        for _ in range(args.rounds):
            measure_matmul_peaks.cache_clear()
            peaks.append(measure_matmul_peaks(size=2048))   # each round: the machine is shared
            for system, steps in systems.items():
                for mode, step in steps.items():
                    train_times[(system, mode)] += [timed(step) for _ in range(args.steps)]
            for policy in POLICIES:
                serve_times[policy] += [timed(lambda: embedders[policy](texts)) for _ in range(args.serve_calls)]
        kernels = {(system, mode): matmul_kernel_seconds(step) for system, steps in systems.items()
                   for mode, step in steps.items() if not mode[1]}
        kernels["serve"] = matmul_kernel_seconds(lambda: embedders["mixed_bfloat16"](texts))
    shapes = shape_rates(args.batch_size)
    best = MatmulPeaks(max(peak.float32 for peak in peaks), max(peak.bfloat16 for peak in peaks))
    report(args, texts, best, train_times, serve_times, kernels, cosine(outputs["mixed_bfloat16"], outputs["float32"]),
           cosine(embeddings["mixed_bfloat16"], embeddings["float32"]))
    print_shape_rates(shapes, best.bfloat16)


def print_shape_rates(shapes, peak: float) -> None:
    """The bound the matmul kernels set: each encoder shape's bf16 rate alone, and their FLOP-weighted mean."""
    print("\n| encoder matmul (bf16, alone) | batch x m x k x n | GFLOP/s | share of the bf16 peak |")
    print("|---|---|---:|---:|")
    for name, dims, rate in shapes:
        print(f"| {name} | {' x '.join(map(str, dims))} | {rate:.0f} | {rate / peak:.0%} |")
    flops = [2.0 * np.prod(dims) for _, dims, _ in shapes]
    mean = sum(flops) / sum(flop / rate for flop, (_, _, rate) in zip(flops, shapes))
    print(f"| all of one layer's forward, FLOP-weighted | | {mean:.0f} | {mean / peak:.0%} |")


def share(flops: float, seconds: float, peak: float) -> str:
    return f"{flops / seconds / 1e9 / peak:.0%}"


def report(args, texts, peaks, train_times, serve_times, kernels, train_cosine: float, serve_cosine: float) -> None:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.machine()) if Path("/proc/cpuinfo").exists() else ""
    print(f"# {model}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, TF {tf.__version__}, "
          f"Keras {keras.__version__}; {describe_cpu_bf16(cpu_bf16_flags())}")
    print(f"# matmul peaks (TensorFlow, 2048 square, best over the rounds): {peaks.describe()}")
    peak = {"float32": peaks.float32, "mixed_bfloat16": peaks.bfloat16}
    print("| workload | policy, mode | per s | vs fp32 | cosine to fp32 | share of the dtype's matmul peak: "
          "whole step | inside the matmul kernels |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (system, (policy, jit)), times in train_times.items():
        flops = matmul_flops(TRAIN_CONFIG, args.batch_size, "tfbert" if system == "tfbert" else "keras_hub")
        rate, fp32 = 1 / statistics.median(times), 1 / statistics.median(train_times[(system, ("float32", True))])
        similarity = ("1" if policy == "float32" else f"{train_cosine:.5f}") if system == "tfbert" else "-"
        inside = share(flops, kernels[(system, (policy, jit))], peak[policy]) if (system, (policy, jit)) in kernels else "-"
        print(f"| {system} {TRAIN_CONFIG} MLM{'+NSP' if system == 'tfbert' else ''} train, batch {args.batch_size} | "
              f"{mode_name(policy, jit)} | {rate:.3f} steps | {rate / fp32:.2f}x | {similarity} | "
              f"{share(flops, 1 / rate, peak[policy])} | {inside} |")
    flops = serving_flops(texts)
    for policy in POLICIES:
        seconds = statistics.median(serve_times[policy])
        fp32 = statistics.median(serve_times["float32"])
        inside = share(flops, kernels["serve"], peak[policy]) if policy == "mixed_bfloat16" else "-"
        print(f"| MiniLM-L6 SavedModel strings->embeddings, batch {args.serve_batch} | {policy}, graph + XLA-fused "
              f"elementwise | {args.serve_batch / seconds:.1f} sentences | {fp32 / seconds:.2f}x | "
              f"{'1' if policy == 'float32' else f'{serve_cosine:.5f}'} | {share(flops, seconds, peak[policy])} | "
              f"{inside} |")


if __name__ == "__main__":
    main()
