"""Where tfbert's serving time goes beside ONNX Runtime: CPU time per call on one thread, whole pipelines and encoders.

`serving_ort.py` measures latency and throughput with every core; this script asks why the numbers differ. It
runs everything on one thread and reports process CPU milliseconds per call, which a busy machine inflates far
less than wall time, for:

- the three pipelines of `serving_ort.py` (tfbert default export, tfbert with `xla_max_batch`, ORT +
  `tokenizers`), strings in, embeddings out, at batch 1 (one Botchan line, about 18 pieces) and batch 32;
- the bare all-MiniLM-L6-v2 encoder (no tokenizer, no pooling) on ids of fixed shapes: TensorFlow's graph
  (`tf.function`), the same function XLA-compiled (`jit_compile=True`), the same function converted to
  TensorFlow Lite (`TFLiteConverter.from_concrete_functions`, run by `tf.lite.Interpreter`, whose default
  XNNPACK delegate prepacks the weights), and ORT's fused session. Length 1 is almost no arithmetic, so it
  shows each runtime's fixed cost per call: op dispatch and reading the weights.

    nice -n 10 python benchmarks/serving_breakdown.py [--output benchmarks/results/serving_breakdown.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

import numpy as np
import serving_ort
from sentence_embeddings_common import botchan_lines, minilm_folder

ENCODER_SHAPES = ((1, 1), (1, 18), (32, 26))


def cpu_ms(call, repeats: int) -> float:
    """Process CPU milliseconds per `call()`, after three warm-up calls."""
    for _ in range(3):
        call()
    start = time.process_time()
    for _ in range(repeats):
        call()
    return (time.process_time() - start) * 1000 / repeats


def pipeline_rows(checkpoint: Path, directory: str, texts: list[str], xla_max_batch: int) -> list[str]:
    """Batch-1 and batch-32 CPU ms of the three `serving_ort.py` pipelines, strings in."""
    systems = {"tfbert default export": serving_ort.tfbert_embedder(checkpoint, directory),
               f"tfbert xla_max_batch={xla_max_batch}": serving_ort.tfbert_embedder(checkpoint, directory, xla_max_batch),
               "ORT + tokenizers": serving_ort.ort_embedder(checkpoint, directory, threads=1)}
    rows = []
    for name, embed in systems.items():
        serving_ort.warm_up(embed, texts)
        single = np.median([cpu_ms(lambda text=text, embed=embed: embed([text]), 20) for text in texts[100:110]])
        batch = cpu_ms(lambda embed=embed: embed(texts[200:232]), 10)
        tokenize = np.median([cpu_ms(lambda text=text, embed=embed: embed.tokenize([text]), 20) for text in texts[100:110]])
        rows.append(f"| {name} | {single:.2f} | {tokenize:.2f} | {batch:.1f} | {32000 / batch:.0f} |")
    return rows


def tflite_call(encoder, ids: dict) -> Callable[[], None]:
    """`encoder` converted to TensorFlow Lite at the shapes of `ids`: a call of the interpreter on them."""
    shape = list(ids["token_ids"].shape)
    interpreter, indexes = serving_ort.tflite_interpreter(encoder, "sequence_output", shape, threads=1)
    interpreter.allocate_tensors()
    for name, index in zip(serving_ort.ENCODER_INPUTS, indexes):
        interpreter.set_tensor(index, ids[name].numpy())
    return interpreter.invoke


def encoder_rows(checkpoint: Path, directory: str) -> list[str]:
    """CPU ms of the bare encoder per shape: TensorFlow graph, XLA, TensorFlow Lite, ORT session."""
    import onnxruntime
    import tensorflow as tf

    from tfbert.convert.huggingface import load_huggingface

    encoder = load_huggingface(checkpoint)
    graph = tf.function(lambda inputs: encoder(inputs, training=False)["sequence_output"], autograph=False)
    xla = tf.function(lambda inputs: encoder(inputs, training=False)["sequence_output"], autograph=False,
                      jit_compile=True)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(serving_ort.onnx_model(checkpoint, directory), options,
                                           providers=["CPUExecutionProvider"])
    rows = []
    for batch, length in ENCODER_SHAPES:
        ids = {"token_ids": tf.ones([batch, length], tf.int32), "padding_mask": tf.ones([batch, length], tf.int32),
               "segment_ids": tf.zeros([batch, length], tf.int32)}
        onnx_ids = {"input_ids": np.ones([batch, length], np.int64),
                    "attention_mask": np.ones([batch, length], np.int64),
                    "token_type_ids": np.zeros([batch, length], np.int64)}
        repeats = 100 if batch == 1 else 5
        times = [cpu_ms(lambda ids=ids: graph(ids), repeats), cpu_ms(lambda ids=ids: xla(ids), repeats),
                 cpu_ms(tflite_call(encoder, ids), repeats),
                 cpu_ms(lambda onnx_ids=onnx_ids: session.run(None, onnx_ids), repeats)]
        rows.append(f"| {batch} x {length} | " + " | ".join(f"{value:.2f}" for value in times) + " | "
                    + " | ".join(f"{value / times[-1]:.2f}x" for value in times[:-1]) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--xla-max-batch", type=int, default=4)
    parser.add_argument("--output", type=Path, help="also write the results (Markdown) here")
    args = parser.parse_args()
    serving_ort.set_threads(1)
    header = serving_ort.machine_lines(1)
    checkpoint, texts = minilm_folder(), botchan_lines(600)
    with tempfile.TemporaryDirectory() as directory:
        pipelines = pipeline_rows(checkpoint, directory, texts, args.xla_max_batch)
        encoders = encoder_rows(checkpoint, directory)
    serving_ort.report("Serving: where the time goes (one thread, CPU time)", header, [
        "Pipelines, strings in, embeddings out (CPU ms per call, one thread):", "",
        "| system | batch 1 | of which tokenizing | batch 32 | sentences per CPU-second at batch 32 |",
        "|---|---:|---:|---:|---:|", *pipelines, "",
        "The bare encoder on ids (CPU ms per call, one thread):", "",
        "| batch x length | TF graph | TF XLA | TF Lite | ORT | graph / ORT | XLA / ORT | Lite / ORT |",
        "|---|---:|---:|---:|---:|---:|---:|---:|", *encoders], args.output)


if __name__ == "__main__":
    main()
