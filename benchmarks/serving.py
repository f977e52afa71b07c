"""Serving speed: the exported SavedModel (strings in, `serving_default`) beside the usual Python stack.

Both sides compute all-MiniLM-L6-v2 sentence embeddings (mean pooling) with the same weights:

- tfbert: `export_saved_model` of the converted checkpoint, loaded with `tf.saved_model.load`,
  called on raw strings (tokenization, packing to 128 and the encoder all in one graph).
- Python: Hugging Face `tokenizers` (truncate to 128, pad to the longest in the batch) + PyTorch
  `transformers.BertModel` + mean pooling in torch, under `torch.inference_mode()`.

Batch 1 gives p50 / p99 latency over `--requests` calls; batch 64 gives sentences per second over
`--seconds`. Texts are Botchan lines (the test assets).

The measuring code is `benchmarks.lab.serving` (`python -m benchmarks serve` runs it too).

    python benchmarks/serving.py [--requests 200] [--seconds 15]
"""

from __future__ import annotations

import os
import sys

# The checkout, where `benchmarks.lab` (the measuring code) lives.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from benchmarks.lab import serving  # noqa: E402
from benchmarks.lab.serving import latency, throughput  # noqa: E402,F401  (embedding_serving.py imports them from here)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    print(serving.measure(args.requests, args.seconds, args.batch_size).markdown())


if __name__ == "__main__":
    main()
