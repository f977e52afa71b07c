"""The first `fit` step of tfbert's models: Keras building the optimizer while it traces, or tfbert building it first.

Keras' TensorFlow trainer makes the optimizer's variables inside the first trace of the train step, and
TensorFlow then traces the step a second time; tfbert's models build the optimizer before `fit`
(`tfbert.models.fitting`). This script compiles each model with Adam and runs one step of `fit` on a batch of 2
x 16 tokens, through `keras.Model.fit` (Keras alone) and through the model's own `fit`, with XLA off and on, in a
fresh process per model, way and round, and reports the process CPU seconds of that first step (best of the
rounds): the trace(s), XLA's compile and the step.

    python benchmarks/first_fit.py [--rounds 2] [--output benchmarks/results/first-fit.md]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # the checkout: benchmarks.lab

from benchmarks.lab.children import child_json  # noqa: E402

MODELS = {
    "bert_tiny pretraining (MLM + NSP)": ("pretraining", "bert_tiny"),
    "bert_tiny classifier": ("classifier", "bert_tiny"),
    "bert_base classifier": ("classifier", "bert_base"),
}
WAYS = ("keras", "tfbert")   # keras.Model.fit, or the model's own fit
BATCH, LENGTH, PREDICTIONS = 2, 16, 3


def _model_and_batch(kind: str, config_name: str):
    import numpy as np

    from tfbert.config import load_config
    from tfbert.models.pretraining import PretrainingModel
    from tfbert.tasks import SequenceClassifier

    config = load_config(config_name)
    rng = np.random.default_rng(0)
    inputs = {"token_ids": rng.integers(5, config.encoder.vocab_size, (BATCH, LENGTH)).astype("int32"),
              "padding_mask": np.ones((BATCH, LENGTH), "int32"), "segment_ids": np.zeros((BATCH, LENGTH), "int32")}
    if kind == "classifier":
        return SequenceClassifier(config.encoder, num_classes=2), inputs, np.array([0, 1])
    inputs["masked_positions"] = np.tile(np.arange(1, PREDICTIONS + 1, dtype="int32"), (BATCH, 1))
    labels = {"masked_ids": inputs["token_ids"][:, 1:PREDICTIONS + 1],
              "masked_weights": np.ones((BATCH, PREDICTIONS), "float32"), "nsp_labels": np.array([0, 1], "int32")}
    return PretrainingModel(config), inputs, labels


def measure(model_name: str, way: str, jit: bool) -> dict[str, float]:
    """In this process: CPU seconds of the first one-step `fit`."""
    import time

    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    model, inputs, labels = _model_and_batch(*MODELS[model_name])
    model.compile(optimizer=keras.optimizers.Adam(1e-4), jit_compile=jit)
    dataset = tf.data.Dataset.from_tensors((inputs, labels))
    fit = keras.Model.fit if way == "keras" else type(model).fit
    start = time.process_time()
    fit(model, dataset, verbose=0)
    return {"cpu": time.process_time() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--output", help="also write the table to this Markdown file")
    parser.add_argument("--measure", nargs=3, help=argparse.SUPPRESS)   # internal: MODEL WAY JIT, in a child
    args = parser.parse_args()
    if args.measure:
        import json

        model_name, way, jit = args.measure
        print(json.dumps(measure(model_name, way, jit == "on")))
        return
    rows = []
    for model_name in MODELS:
        cells = []
        for jit in ("off", "on"):
            best = {}
            for _ in range(args.rounds):
                for way in WAYS:
                    cpu = child_json([sys.executable, __file__, "--measure", model_name, way, jit])["cpu"]
                    best[way] = min(cpu, best.get(way, cpu))
            cells += [f"{best['keras']:.2f}", f"{best['tfbert']:.2f}", f"{best['keras'] / best['tfbert']:.2f}x"]
        rows.append(f"| {model_name} | " + " | ".join(cells) + " |")
    table = ["| model | XLA off: Keras alone | tfbert | ratio | XLA on: Keras alone | tfbert | ratio |",
             "|---|---:|---:|---:|---:|---:|---:|", *rows]
    print("\n".join(table))
    if args.output:
        Path(args.output).write_text("\n".join(table) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
