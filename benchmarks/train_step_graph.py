"""The XLA graph of tfbert's masked-LM train step, summarised so two checkouts can be compared.

A wall-clock A/B needs a quiet machine; this one is shared. The compiled train step is what the
speed comes from, so a change that leaves the step's HLO the same cannot change its speed. For each
config the script builds `PretrainingModel` (MLM + NSP/SOP, Adam, batch 4 x length 128 with 20 predictions, the shapes
of `train_throughput.py`), lowers `train_step` with `jit_compile=True` and prints the number of HLO
instructions, of dot (matmul) instructions and a digest of the histogram of (opcode, result shape).
Run it in two checkouts and compare the rows:

    python benchmarks/train_step_graph.py --configs bert_tiny albert_tiny roberta_tiny bert_small albert_base
    git worktree add /tmp/old REV && cd /tmp/old && PYTHONPATH=. python OUR/benchmarks/train_step_graph.py --configs ...
"""

from __future__ import annotations



import argparse
import collections
import hashlib
import os
import re

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tfbert  # noqa: E402
from tfbert.config import load_config  # noqa: E402
from tfbert.models.pretraining import PretrainingModel  # noqa: E402

# The graph depends on the shapes only, so the batch is zeros (no import of code the other checkout may lack).
BATCH, LENGTH, PREDICTIONS = 4, 128, 20
INSTRUCTION = re.compile(r"= (\S+) ([a-z][\w-]*)\(")


def train_step_hlo(config_name: str) -> str:
    """HLO text (before XLA's optimisation passes) of one Adam train step of `config_name`'s model."""
    model = PretrainingModel(load_config(config_name))
    model.compile(optimizer=keras.optimizers.Adam(1e-4), jit_compile=True)
    tokens, predictions = np.zeros((BATCH, LENGTH), "int32"), np.zeros((BATCH, PREDICTIONS), "int32")
    inputs = {"token_ids": tokens, "segment_ids": tokens, "padding_mask": tokens + 1, "masked_positions": predictions}
    labels = {"masked_ids": predictions, "masked_weights": predictions.astype("float32") + 1}
    if model.pair_objective:
        labels[f"{model.pair_objective}_labels"] = np.zeros(BATCH, "int32")
    model.train_on_batch(inputs, labels)  # builds the optimizer's variables
    as_tensors = ({k: tf.constant(v) for k, v in inputs.items()}, {k: tf.constant(v) for k, v in labels.items()})
    return tf.function(model.train_step, jit_compile=True).experimental_get_compiler_ir(as_tensors)(stage="hlo")


def summary(hlo: str) -> tuple[int, int, str]:
    """Instructions, dot instructions, and a digest of the (opcode, result shape) histogram."""
    histogram = collections.Counter(f"{opcode} {re.sub(r'{[^}]*}', '', shape)}"
                                    for shape, opcode in INSTRUCTION.findall(hlo))
    digest = hashlib.sha1("\n".join(sorted(f"{key} {count}" for key, count in histogram.items())).encode())
    dots = sum(count for key, count in histogram.items() if key.startswith("dot "))
    return sum(histogram.values()), dots, digest.hexdigest()[:12]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["bert_tiny", "albert_tiny", "roberta_tiny"])
    args = parser.parse_args()
    print(f"# tfbert from {os.path.dirname(tfbert.__file__)}, TF {tf.__version__}, Keras {keras.__version__}")
    print("| config | HLO instructions | dot instructions | histogram digest |")
    print("|---|---:|---:|---|")
    for config_name in args.configs:
        instructions, dots, digest = summary(train_step_hlo(config_name))
        print(f"| {config_name} | {instructions} | {dots} | `{digest}` |", flush=True)


if __name__ == "__main__":
    main()
