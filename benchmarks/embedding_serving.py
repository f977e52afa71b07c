"""Embedding throughput: the exported SavedModel of an embedding model dir beside sentence-transformers (PyTorch, CPU).

Both compute all-MiniLM-L6-v2 sentence embeddings (mean pooling, unit length, 128 pieces at most) with the
same weights on the same Botchan lines:

- tfbert: the model dir `finetune --task embedding` / `distill` write (a `SentenceEmbedder` with unit-length
  output, its tokenizer and task.json), exported as `tfbert export` does, loaded with `tf.saved_model.load`
  and called on raw strings (tokenizer, packing and encoder in one graph).
- sentence-transformers: `SentenceTransformer([Transformer, Pooling("mean"), Normalize()]).encode(texts)`.

Batch 1 gives p50 latency over `--requests` calls; batch `--batch-size` gives sentences per second over
`--seconds`. The systems alternate for `--rounds` rounds and the table shows medians.

    nice -n 19 python benchmarks/embedding_serving.py [--rounds 3] [--seconds 10] [--requests 100]
"""

from __future__ import annotations

import sys


import argparse
import os
import statistics
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from sentence_embeddings_common import botchan_lines, machine, minilm_folder, sentence_transformer  # noqa: E402
from serving import latency, throughput  # noqa: E402

SEQUENCE_LENGTH = 128


def tfbert_embedder(checkpoint: Path, directory: str):
    """`tfbert export MODEL_DIR` of MiniLM written as an embedding model dir, called on strings."""
    from tfbert.convert.huggingface import load_huggingface
    from tfbert.export import export_saved_model
    from tfbert.finetuning.embeddings import save_embedding_model
    from tfbert.artifacts import model_file
    from tfbert.models.tasks import SentenceEmbedder
    from tfbert.text import WordPieceTokenizer

    model_dir = Path(directory) / "minilm"
    embedder = SentenceEmbedder(load_huggingface(checkpoint), pooling="mean", normalize=True)
    save_embedding_model(model_dir, embedder, WordPieceTokenizer(checkpoint / "vocab.txt"),
                         {"max_length": SEQUENCE_LENGTH})
    path = export_saved_model(model_file(model_dir), "minilm", output_dir=Path(directory) / "saved",
                              sequence_length=SEQUENCE_LENGTH)
    signature = tf.saved_model.load(str(path)).signatures["serving_default"]
    return lambda texts: signature(text=tf.constant(texts))["embedding"].numpy()


def torch_embedder(checkpoint: Path):
    model = sentence_transformer(checkpoint, SEQUENCE_LENGTH)
    return lambda texts: model.encode(texts, batch_size=len(texts), convert_to_numpy=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--torch-threads", type=int, help="torch.set_num_threads (default: torch's own choice)")
    args = parser.parse_args()
    import torch

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    checkpoint = minilm_folder()
    texts = botchan_lines(4096)
    with tempfile.TemporaryDirectory() as directory:
        systems = {"tfbert SavedModel (strings in)": tfbert_embedder(checkpoint, directory),
                   "sentence-transformers (PyTorch)": torch_embedder(checkpoint)}
        outputs = [embed(texts[:32]) for embed in systems.values()]
        print(f"max |difference| of the unit-length embeddings of 32 lines: {np.abs(outputs[0] - outputs[1]).max():.2e}")
        print(f"{machine()}; tensorflow {tf.__version__}, torch {torch.__version__} ({torch.get_num_threads()} threads)")
        results = {name: {"p50": [], "throughput": []} for name in systems}
        for _ in range(args.rounds):
            for name, embed in systems.items():
                results[name]["p50"].append(latency(embed, texts, args.requests)[0])
                results[name]["throughput"].append(throughput(embed, texts, args.batch_size, args.seconds))
        print(f"| system | batch 1 p50 ms | batch {args.batch_size} sentences/s (median of {args.rounds}) |")
        print("|---|---:|---:|")
        for name, values in results.items():
            print(f"| {name} | {statistics.median(values['p50']):.1f} | {statistics.median(values['throughput']):.0f} |")
        ratios = [a / b for a, b in zip(*(values["throughput"] for values in results.values()))]
        print(f"throughput ratio per round: {', '.join(f'{ratio:.2f}x' for ratio in ratios)}")


if __name__ == "__main__":
    main()
