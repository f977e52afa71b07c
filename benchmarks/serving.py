"""Serving speed: the exported SavedModel (strings in, `serving_default`) beside the usual Python stack.

Both sides compute all-MiniLM-L6-v2 sentence embeddings (mean pooling) with the same weights:

- tfbert: `export_saved_model` of the converted checkpoint, loaded with `tf.saved_model.load`,
  called on raw strings (tokenization, packing to 128 and the encoder all in one graph).
- Python: Hugging Face `tokenizers` (truncate to 128, pad to the longest in the batch) + PyTorch
  `transformers.BertModel` + mean pooling in torch, under `torch.inference_mode()`.

Batch 1 gives p50 / p99 latency over `--requests` calls; batch 64 gives sentences per second over
`--seconds`. Texts are Botchan lines (the test assets).

    python benchmarks/serving.py [--requests 200] [--seconds 15]
"""

from __future__ import annotations

import sys

# Run as a script, this file's folder comes first on sys.path, where benchmarks/tokenize.py would
# shadow the standard library's `tokenize` module; drop it.
if sys.path and sys.path[0] and __file__.startswith(sys.path[0]):
    sys.path.pop(0)

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from assets import asset  # noqa: E402

SEQUENCE_LENGTH = 128


def botchan_lines(count: int) -> list[str]:
    lines = [line.strip() for line in asset("text/botchan.txt").read_text(encoding="utf-8").splitlines()]
    lines = [line for line in lines if len(line) > 40]
    return (lines * (count // len(lines) + 1))[:count]


def tfbert_embedder(checkpoint: Path, directory: str):
    from tfbert.convert.huggingface import load_huggingface
    from tfbert.export import export_saved_model
    from tfbert.tasks import SentenceEmbedder
    from tfbert.text import WordPieceTokenizer

    model = SentenceEmbedder(load_huggingface(checkpoint), pooling="mean")
    path = export_saved_model(model, "minilm", tokenizer=WordPieceTokenizer(checkpoint / "vocab.txt"),
                              output_dir=directory, sequence_length=SEQUENCE_LENGTH)
    signature = tf.saved_model.load(str(path)).signatures["serving_default"]
    return lambda texts: signature(text=tf.constant(texts))["embedding"].numpy()


def torch_embedder(checkpoint: Path):
    import tokenizers
    import torch
    import transformers

    tokenizer = tokenizers.Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
    tokenizer.enable_truncation(SEQUENCE_LENGTH)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    model = transformers.BertModel.from_pretrained(str(checkpoint)).eval()

    def embed(texts):
        encodings = tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in encodings])
        mask = torch.tensor([e.attention_mask for e in encodings])
        with torch.inference_mode():
            hidden = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
            weights = mask[:, :, None].float()
            return ((hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)).numpy()

    return embed


def latency(embed, texts: list[str], requests: int) -> tuple[float, float]:
    for text in texts[:10]:
        embed([text])
    times = []
    for text in texts[:requests]:
        start = time.perf_counter()
        embed([text])
        times.append(time.perf_counter() - start)
    return float(np.percentile(times, 50) * 1000), float(np.percentile(times, 99) * 1000)


def throughput(embed, texts: list[str], batch: int, seconds: float) -> float:
    batches = [texts[i:i + batch] for i in range(0, len(texts) - batch + 1, batch)]
    embed(batches[0])
    done, start, index = 0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        embed(batches[index % len(batches)])
        done += batch
        index += 1
    return done / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    import torch

    checkpoint = asset("minilm/config.json").parent
    texts = botchan_lines(4096)
    with tempfile.TemporaryDirectory() as directory:
        systems = {"tfbert SavedModel (strings in)": tfbert_embedder(checkpoint, directory),
                   "tokenizers + PyTorch transformers": torch_embedder(checkpoint)}
        sample = texts[:16]
        outputs = [embed(sample) for embed in systems.values()]
        print(f"max |difference| of the embeddings on 16 lines: {np.abs(outputs[0] - outputs[1]).max():.2e}")
        print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, tensorflow {tf.__version__}, "
              f"torch {torch.__version__} ({torch.get_num_threads()} threads)")
        print(f"| system | batch 1 p50 ms | batch 1 p99 ms | batch {args.batch_size} sentences/s |")
        print("|---|---:|---:|---:|")
        rows = {}
        for name, embed in systems.items():
            p50, p99 = latency(embed, texts, args.requests)
            rows[name] = throughput(embed, texts, args.batch_size, args.seconds)
            print(f"| {name} | {p50:.1f} | {p99:.1f} | {rows[name]:.0f} |", flush=True)
        first, second = rows.values()
        print(f"throughput ratio at batch {args.batch_size}: {first / second:.2f}x")


if __name__ == "__main__":
    main()
