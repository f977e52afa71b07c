"""Serving speed: the exported SavedModel (strings in, `serving_default`) beside the usual Python stack.

Both sides compute all-MiniLM-L6-v2 sentence embeddings (mean pooling) with the same weights:

- tfbert: `export_saved_model` of the converted checkpoint, loaded with `tf.saved_model.load`,
  called on raw strings (tokenization, packing to 128 and the encoder all in one graph).
- Python: Hugging Face `tokenizers` (truncate to 128, pad to the longest in the batch) + PyTorch
  `transformers.BertModel` + mean pooling in torch, under `torch.inference_mode()`.

Batch 1 gives p50 / p99 latency over `requests` calls; a larger batch gives sentences per second
over `seconds`, the systems taking turns. Texts are Botchan lines (the test assets).

Example:
    >>> table = measure(requests=10, seconds=0.5, batch_size=8)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.lab import peers
from benchmarks.lab.assets import asset
from benchmarks.lab.report import Table
from benchmarks.lab.timing import measure_alternately

SEQUENCE_LENGTH = 128
PYTHON_STACK_PEERS = ("tokenizers", "torch", "transformers")


def botchan_lines(count: int) -> list[str]:
    """`count` Botchan lines longer than 40 characters, repeated as needed."""
    lines = [line.strip() for line in asset("text/botchan.txt").read_text(encoding="utf-8").splitlines()]
    lines = [line for line in lines if len(line) > 40]
    return (lines * (count // len(lines) + 1))[:count]


def tfbert_embedder(checkpoint: Path, directory: str):
    """Strings -> embeddings through the SavedModel exported into `directory`."""
    import tensorflow as tf

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
    """Strings -> embeddings with Hugging Face `tokenizers` and PyTorch `transformers`."""
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
    """p50 and p99 milliseconds of single-string calls, after 10 warm-up calls."""
    for text in texts[:10]:
        embed([text])
    times = []
    for text in texts[:requests]:
        start = time.perf_counter()
        embed([text])
        times.append(time.perf_counter() - start)
    return float(np.percentile(times, 50) * 1000), float(np.percentile(times, 99) * 1000)


def throughput(embed, texts: list[str], batch: int, seconds: float) -> float:
    """Sentences per second in batches of `batch` for `seconds`, after one warm-up batch."""
    batches = [texts[i:i + batch] for i in range(0, len(texts) - batch + 1, batch)]
    embed(batches[0])
    done, start, index = 0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        embed(batches[index % len(batches)])
        done += batch
        index += 1
    return done / (time.perf_counter() - start)


def measure(requests: int, seconds: float, batch_size: int) -> Table:
    """The serving table: a row per system (the Python stack only where its peers are installed)."""
    import tensorflow as tf

    checkpoint = asset("minilm/config.json").parent
    texts = botchan_lines(4096)
    absent = peers.missing(PYTHON_STACK_PEERS)
    with tempfile.TemporaryDirectory() as directory:
        systems = {"tfbert SavedModel (strings in)": tfbert_embedder(checkpoint, directory)}
        if not absent:
            systems["tokenizers + PyTorch transformers"] = torch_embedder(checkpoint)
        setup = [f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, tensorflow {tf.__version__}"]
        if not absent:
            import torch

            outputs = [embed(texts[:16]) for embed in systems.values()]
            setup.insert(0, f"max |difference| of the embeddings on 16 lines: {np.abs(outputs[0] - outputs[1]).max():.2e}")
            setup[-1] += f", torch {torch.__version__} ({torch.get_num_threads()} threads)"
        latencies = {name: latency(embed, texts, requests) for name, embed in systems.items()}
        rates = measure_alternately({name: (lambda embed=embed: throughput(embed, texts, batch_size, seconds))
                                     for name, embed in systems.items()}, rounds=1)
    table = Table("Serving", ["system", "batch 1 p50 ms", "batch 1 p99 ms", f"batch {batch_size} sentences/s"], [],
                  setup=setup, notes=[peers.skipped_note(peer) for peer in absent])
    for name, (p50, p99) in latencies.items():
        table.rows.append([name, f"{p50:.1f}", f"{p99:.1f}", f"{max(rates[name]):.0f}"])
    if len(rates) == 2:
        first, second = (max(values) for values in rates.values())
        table.notes.insert(0, f"throughput ratio at batch {batch_size}: {first / second:.2f}x")
    return table
