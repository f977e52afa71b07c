"""Serving latency and throughput: tfbert's strings-in SavedModel beside ONNX Runtime, alternating in one process.

Both compute all-MiniLM-L6-v2 sentence embeddings (mean pooling, unit length, 128 pieces at most) with the
same weights on the same texts (below):

- tfbert: `export_saved_model` of a `SentenceEmbedder` (mean pooling, unit length) on the converted
  checkpoint, loaded with `tf.saved_model.load` and called on raw strings (`serving_default`: tokenizer,
  packing and encoder in one graph); twice: the default export, and one with `xla_max_batch`
  (`--xla-max-batch`, default 4: requests of up to that many texts run an XLA-compiled encoder at bucketed
  lengths, `tfbert.export.compiled`).
- ONNX Runtime, the optimised CPU path sentence-transformers offers: `torch.onnx.export` of
  `transformers.BertModel` (eager attention, so the fusions apply), `onnxruntime.transformers.optimizer`
  BERT fusions (EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu), an
  `InferenceSession` at graph optimisation level ALL, Hugging Face `tokenizers` (truncate to 128, pad to
  the batch's longest), mean pooling and L2 normalisation in NumPy.
- tfbert's TF Lite export: `export_tflite` of the same `SentenceEmbedder` (encoder, mean pooling, unit length;
  builtin ops, open batch and length), run by its loader `tfbert.export.TFLiteExport` as `tfbert predict` runs
  it: the export's `Preprocessor` packs the strings (in TensorFlow), the batch is cut to its longest text and
  XNNPACK runs `model.tflite` on `--threads` threads; once with float32 weights and once with int8 weights
  (`--quantize dynamic`, TF Lite's dynamic-range quantization).
- ONNX Runtime with int8 weights: the same fused model through `onnxruntime.quantization.quantize_dynamic`
  (int8 weights per tensor, as sentence-transformers' `export_dynamic_quantized_onnx_model` makes it for
  AVX-512 VNNI CPUs), the peer of tfbert's int8 row. Ratios are to float32 ORT.

Texts are real English in three length buckets (`--buckets`, by default 16, 64 and 128): windows of one to
eight consecutive sentences of the Lee news corpus (the test assets), grouped by their WordPiece pieces with
[CLS] and [SEP], so that "up to 16" holds texts of 9-16 pieces, "up to 64" 33-64 and "up to 128" 65-128
(`bucketed_texts`); each bucket gets its own table. Short texts are where tfbert's int8 TF Lite export leads
ONNX Runtime; at 128 pieces the encoder's matmuls dominate and the order changes.

All get the same threads (`--threads`, by default every core this process may run on): TensorFlow's
intra-op and inter-op pools, ONNX Runtime's intra-op pool (sequential execution). Pin the process with
`taskset` to measure on fixed cores. Each round measures batch-1 p50 / p99 latency over `--requests`
calls and sentences/s at batch 32 and 64 over `--seconds`, tfbert then ORT; the table shows medians over
`--rounds` and the ratios. The last three columns compare each system's embeddings of 64 lines to
sentence-transformers' own (`SentenceTransformer([Transformer, Pooling("mean"), Normalize()])`, PyTorch):
the max |difference|, the least cosine, and the Spearman correlation of the 2,016 pair similarities (what an
STS evaluation ranks), which is what int8 weights move, on each bucket's first 64 texts.

    nice -n 10 taskset -c 0,1 python benchmarks/serving_ort.py [--rounds 5] [--buckets 16 64 128] \
        [--output benchmarks/results/serving_ort.md]
"""

from __future__ import annotations

import sys


import argparse  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402

from assets import asset  # noqa: E402
from sentence_embeddings_common import MINILM_DIMENSION, minilm_folder, sentence_transformer  # noqa: E402

SEQUENCE_LENGTH = 128
NUM_HEADS = 12
THROUGHPUT_BATCHES = (32, 64)
ORT = "ONNX Runtime (fused BERT) + tokenizers"
ORT_INT8 = "ONNX Runtime (fused BERT, int8 weights) + tokenizers"
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Text-length buckets: the most pieces (with [CLS] and [SEP]) a bucket's texts have; each holds texts of more
# than half its limit, so the buckets do not overlap.
BUCKETS = (16, 64, 128)
SENTENCES_PER_TEXT = 8


def bucketed_texts(checkpoint: Path, limit: int) -> list[str]:
    """Texts of `limit // 2 + 1` to `limit` WordPiece pieces (the checkpoint's `tokenizer.json`, [CLS] and [SEP]
    counted): every window of 1 to `SENTENCES_PER_TEXT` consecutive sentences of the Lee news corpus (300
    documents, the test assets) that fits, in corpus order, each once."""
    import tokenizers

    tokenizer = tokenizers.Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    found: dict[str, None] = {}
    for document in asset("text/lee_background.cor").read_text(encoding="utf-8").splitlines():
        sentences = [sentence for sentence in re.split(r"(?<=[.!?])\s+", document.strip()) if sentence]
        for first in range(len(sentences)):
            for last in range(first + 1, min(len(sentences), first + SENTENCES_PER_TEXT) + 1):
                text = " ".join(sentences[first:last])
                pieces = len(tokenizer.encode(text).ids)
                if pieces > limit:
                    break
                if pieces > limit // 2:
                    found[text] = None
    return list(found)


def tfbert_embedder(checkpoint: Path, directory: str, xla_max_batch: int | None = None):
    """Strings -> unit-length embeddings through tfbert's exported SavedModel (`serving_default`), exported
    with `xla_max_batch` (`tfbert.export.compiled`) where given."""
    import tensorflow as tf

    from tfbert.convert.huggingface import load_huggingface
    from tfbert.export import export_saved_model
    from tfbert.models.tasks import SentenceEmbedder
    from tfbert.text import WordPieceTokenizer

    model = SentenceEmbedder(load_huggingface(checkpoint), pooling="mean", normalize=True)
    path = export_saved_model(model, f"minilm_xla{xla_max_batch or 0}",
                              tokenizer=WordPieceTokenizer(checkpoint / "vocab.txt"), output_dir=directory,
                              sequence_length=SEQUENCE_LENGTH, xla_max_batch=xla_max_batch)
    signatures = tf.saved_model.load(str(path)).signatures

    def embed(texts):
        return signatures["serving_default"](text=tf.constant(texts))["embedding"].numpy()

    embed.tokenize = lambda texts: signatures["preprocess"](text=tf.constant(texts))["input_word_ids"].numpy()
    return embed


ENCODER_INPUTS = ("token_ids", "segment_ids", "padding_mask")


def tflite_interpreter(model, output: str, shape: list[int | None], threads: int):
    """`model`'s `output` on int32 `ENCODER_INPUTS` of `shape` (None: open), converted to TensorFlow Lite
    (builtin ops): `(interpreter on threads threads, the inputs' tensor indexes in ENCODER_INPUTS order)`."""
    import tensorflow as tf

    function = tf.function(lambda *ids: model(dict(zip(ENCODER_INPUTS, ids)), training=False)[output],
                           autograph=False)
    concrete = function.get_concrete_function(*[tf.TensorSpec(shape, tf.int32, name=name) for name in ENCODER_INPUTS])
    interpreter = tf.lite.Interpreter(
        model_content=tf.lite.TFLiteConverter.from_concrete_functions([concrete], function).convert(),
        num_threads=threads)
    indexes = [next(detail["index"] for detail in interpreter.get_input_details() if name in detail["name"])
               for name in ENCODER_INPUTS]
    return interpreter, indexes


def tflite_embedder(checkpoint: Path, directory: str, threads: int, quantize: str | None = None):
    """Strings -> unit-length embeddings through tfbert's TF Lite export: `export_tflite` of the same
    `SentenceEmbedder` (`quantize="dynamic"`: int8 weights), run by `TFLiteExport` (the export's preprocessor,
    the batch cut to its longest text, XNNPACK on `threads` threads), the loader `tfbert predict` uses."""
    from tfbert.convert.huggingface import load_huggingface
    from tfbert.export import TFLiteExport, export_tflite
    from tfbert.models.tasks import SentenceEmbedder
    from tfbert.text import WordPieceTokenizer

    model = SentenceEmbedder(load_huggingface(checkpoint), pooling="mean", normalize=True)
    folder = export_tflite(model, f"minilm_tflite_{quantize or 'float32'}",
                           tokenizer=WordPieceTokenizer(checkpoint / "vocab.txt"), output_dir=directory,
                           sequence_length=SEQUENCE_LENGTH, quantize=quantize)
    source = TFLiteExport(folder, threads)

    def embed(texts):
        return source({"text": texts})["embedding"]

    embed.tokenize = lambda texts: source.encode({"text": texts})["token_ids"]
    return embed


def onnx_model(checkpoint: Path, directory: str) -> str:
    """all-MiniLM-L6-v2 as ONNX (`torch.onnx.export`) with onnxruntime's BERT fusions; the optimised file's path."""
    import torch
    import transformers
    from onnxruntime.transformers import optimizer

    bert = transformers.BertModel.from_pretrained(str(checkpoint), attn_implementation="eager").eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    exported, optimised = Path(directory) / "minilm.onnx", Path(directory) / "minilm_fused.onnx"
    ids = torch.ones(2, 16, dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in ONNX_INPUTS + ("last_hidden_state",)}
    torch.onnx.export(LastHiddenState(), (ids, ids, torch.zeros_like(ids)), str(exported), input_names=list(ONNX_INPUTS),
                      output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)
    fused = optimizer.optimize_model(str(exported), model_type="bert", num_heads=NUM_HEADS,
                                     hidden_size=MINILM_DIMENSION)
    fused.save_model_to_file(str(optimised))
    return str(optimised)


def quantized_onnx_model(fused: str) -> str:
    """The fused model with int8 weights, as sentence-transformers' `export_dynamic_quantized_onnx_model` makes
    it for AVX-512 VNNI CPUs (`onnxruntime.quantization.quantize_dynamic`: int8 weights per tensor, activations
    quantized per call); the file's path."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantized = fused.replace(".onnx", "_int8.onnx")
    # the fused ops (com.microsoft domain) give shape inference no output types: say they are float32
    quantize_dynamic(fused, quantized, weight_type=QuantType.QInt8, per_channel=False, reduce_range=False,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return quantized


def ort_embedder(checkpoint: Path, directory: str, threads: int, int8: bool = False):
    """Strings -> unit-length embeddings: `tokenizers`, the fused ONNX model (`int8`: its int8-weight copy) in
    onnxruntime, NumPy pooling."""
    import onnxruntime
    import tokenizers

    tokenizer = tokenizers.Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
    tokenizer.enable_truncation(SEQUENCE_LENGTH)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    model_file = onnx_model(checkpoint, directory)
    session = onnxruntime.InferenceSession(quantized_onnx_model(model_file) if int8 else model_file, options,
                                           providers=["CPUExecutionProvider"])

    def tokenize(texts):
        return tokenizer.encode_batch(texts)

    def embed(texts):
        encodings = tokenizer.encode_batch(texts)
        ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1.0)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    embed.tokenize = tokenize
    return embed


def warm_up(embed, texts: list[str]) -> None:
    """One call on each of 16 texts spread from the shortest to the longest (every length bucket an XLA export
    compiles), then one per throughput batch size, so no compilation falls in a measurement."""
    ordered = sorted(texts, key=len)
    for index in range(16):
        embed([ordered[index * (len(ordered) - 1) // 15]])
    for batch in THROUGHPUT_BATCHES:
        embed(texts[:batch])


def latencies(embed, texts: list[str]) -> list[float]:
    """Milliseconds of one single-string call per text, after 10 warm-up calls."""
    for text in texts[:10]:
        embed([text])
    times = []
    for text in texts:
        start = time.perf_counter()
        embed([text])
        times.append((time.perf_counter() - start) * 1000)
    return times


def throughput(embed, texts: list[str], batch: int, seconds: float) -> float:
    """Sentences per second in consecutive batches of `batch` texts for `seconds`, after one warm-up batch."""
    batches = [texts[start:start + batch] for start in range(0, len(texts) - batch + 1, batch)]
    embed(batches[0])
    done, index, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        embed(batches[index % len(batches)])
        done += batch
        index += 1
    return done / (time.perf_counter() - start)


def measure_round(embed, texts: list[str], requests: int, seconds: float, offset: int) -> dict[str, float]:
    """One round's batch-1 p50 / p99 ms (texts from `offset`, wrapping round, so rounds see different texts) and
    rates."""
    chosen = [texts[(offset + index) % len(texts)] for index in range(requests)]
    times = latencies(embed, chosen)
    result = {"p50": float(np.percentile(times, 50)), "p99": float(np.percentile(times, 99)),
              "tokenize p50": float(np.percentile(latencies(embed.tokenize, chosen), 50))}
    for batch in THROUGHPUT_BATCHES:
        result[f"batch {batch}"] = throughput(embed, texts, batch, seconds)
    return result


def set_threads(threads: int) -> None:
    """The same thread count for every runtime in this process (before TensorFlow runs any op)."""
    import tensorflow as tf
    import torch

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    torch.set_num_threads(threads)


def machine_lines(threads: int) -> list[str]:
    """CPU, cores, affinity, threads, load and versions, for the results' header."""
    import onnxruntime
    import tensorflow as tf
    import torch

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown CPU")
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    return [f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Machine: {cpu}, {os.cpu_count()} cores, "
            f"this process pinned to {len(os.sched_getaffinity(0))} "
            f"(the load average below counts whatever else ran).",
            f"Threads: {threads} for each system (TensorFlow intra-op and inter-op, onnxruntime intra-op, sequential).",
            f"Versions: TensorFlow {tf.__version__}, onnxruntime {onnxruntime.__version__}, torch {torch.__version__}.",
            f"Load average (1, 5, 15 min) before: {load}."]


COLUMNS = ["p50", "p99"] + [f"batch {batch}" for batch in THROUGHPUT_BATCHES]


def median(measured: list[dict[str, float]], column: str) -> float:
    return statistics.median(round_[column] for round_ in measured)


def agreement(embeddings: np.ndarray, reference: np.ndarray) -> tuple[float, float, float]:
    """How far `embeddings` are from sentence-transformers' `reference` (unit length, same texts): the max abs
    difference, the least cosine of a text's two embeddings, and the Spearman correlation of the cosine
    similarities of every pair of texts (what an STS score ranks)."""
    def pair_similarities(vectors):
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors @ vectors.T)[np.triu_indices(len(vectors), 1)]

    def ranks(values):
        return np.argsort(np.argsort(values)).astype(np.float64)

    cosine = np.sum(embeddings * reference, axis=1) / np.linalg.norm(embeddings, axis=1) / np.linalg.norm(reference, axis=1)
    spearman = np.corrcoef(ranks(pair_similarities(embeddings)), ranks(pair_similarities(reference)))[0, 1]
    return float(np.abs(embeddings - reference).max()), float(cosine.min()), float(spearman)


def table(results: dict[str, list[dict[str, float]]], differences: dict[str, tuple[float, float, float]]) -> list[str]:
    """The Markdown table: a row of medians over the rounds per system, then a row per system of its ratios to
    ORT (the median of the per-round ratios)."""
    lines = ["| system | batch 1 p50 ms | batch 1 p99 ms | "
             + " | ".join(f"{column} sentences/s" for column in COLUMNS[2:])
             + " | max abs diff to sentence-transformers | least cosine | pair-similarity Spearman |",
             "|---|---:|---:|" + "---:|" * len(THROUGHPUT_BATCHES) + "---:|---:|---:|"]
    for name, measured in results.items():
        difference, cosine, spearman = differences[name]
        lines.append(f"| {name} | {median(measured, 'p50'):.2f} | {median(measured, 'p99'):.2f} | "
                     + " | ".join(f"{median(measured, column):.0f}" for column in COLUMNS[2:])
                     + f" | {difference:.1e} | {cosine:.4f} | {spearman:.4f} |")
    for name, ratios in ratios_to_ort(results).items():
        lines.append(f"| {name} / ORT | " + " | ".join(f"{statistics.median(ratios[column]):.2f}x" for column in COLUMNS)
                     + " | | | |")
    return lines


def ratios_to_ort(results: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, list[float]]]:
    """Each other system's per-round ratios to ORT's (float32) measurement of the same round, by column."""
    return {name: {column: [a[column] / b[column] for a, b in zip(measured, results[ORT])] for column in COLUMNS}
            for name, measured in results.items() if name != ORT}


def details(results: dict[str, list[dict[str, float]]]) -> list[str]:
    """Where batch-1 time goes, and the ratios of every round."""
    lines = ["Where batch-1 time goes (median ms): tokenizing and packing (tfbert: the `preprocess` signature, or "
             "the TF Lite export's `TFLiteExport.encode`; ORT: `tokenizers.encode_batch`), and the rest (encoder, "
             "pooling, the call):"]
    for name, measured in results.items():
        tokenize, total = median(measured, "tokenize p50"), median(measured, "p50")
        lines.append(f"- {name}: tokenizing {tokenize:.2f}, the rest {total - tokenize:.2f}")
    lines += ["", "Per-round ratios (latency: below 1 is faster than ORT; throughput: above 1 is faster):"]
    for name, ratios in ratios_to_ort(results).items():
        lines.append(f"- {name} / ORT: " + "; ".join(
            f"{column} " + ", ".join(f"{ratio:.2f}x" for ratio in ratios[column]) for column in COLUMNS))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200, help="batch-1 calls per round")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per throughput measurement")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--xla-max-batch", type=int, default=4,
                        help="the second tfbert export's xla_max_batch (requests of at most this many texts XLA-compiled)")
    parser.add_argument("--buckets", type=int, nargs="+", default=list(BUCKETS),
                        help="text-length buckets, the most WordPiece pieces of each (default 16 64 128)")
    parser.add_argument("--output", type=Path, help="also write the results (Markdown) here")
    args = parser.parse_args()
    set_threads(args.threads)
    header = machine_lines(args.threads)
    checkpoint = minilm_folder()
    buckets = {limit: bucketed_texts(checkpoint, limit) for limit in args.buckets}
    with tempfile.TemporaryDirectory() as directory:
        systems = {"tfbert SavedModel (strings in), default export": tfbert_embedder(checkpoint, directory),
                   f"tfbert SavedModel (strings in), xla_max_batch={args.xla_max_batch}":
                       tfbert_embedder(checkpoint, directory, args.xla_max_batch),
                   "tfbert TF Lite export (XNNPACK)": tflite_embedder(checkpoint, directory, args.threads),
                   "tfbert TF Lite export, int8 weights (`--quantize dynamic`)":
                       tflite_embedder(checkpoint, directory, args.threads, "dynamic"),
                   ORT: ort_embedder(checkpoint, directory, args.threads),
                   ORT_INT8: ort_embedder(checkpoint, directory, args.threads, int8=True)}
        reference = sentence_transformer(checkpoint, SEQUENCE_LENGTH)
        differences = {limit: {name: agreement(embed(texts[:64]), reference.encode(texts[:64], convert_to_numpy=True))
                               for name, embed in systems.items()} for limit, texts in buckets.items()}
        every_text = [text for texts in buckets.values() for text in texts]
        for embed in systems.values():
            warm_up(embed, every_text)
        results = {limit: {name: [] for name in systems} for limit in buckets}
        for round_index in range(args.rounds):
            for limit, texts in buckets.items():
                for name, embed in systems.items():
                    results[limit][name].append(measure_round(embed, texts, args.requests, args.seconds,
                                                              round_index * args.requests))
    body = []
    for limit, texts in buckets.items():
        body += [f"## Texts of up to {limit} pieces ({limit // 2 + 1}-{limit}, {len(texts):,} texts of the Lee "
                 "corpus)", "", *table(results[limit], differences[limit]), "", *details(results[limit]), ""]
    report("Serving: tfbert SavedModel vs ONNX Runtime, by text length", header, body, args.output)


def report(title: str, header: list[str], body: list[str], output: Path | None) -> None:
    """Prints the machine `header`, the load now, the command and `body`; also writes them under `# title` to
    `output` where given."""
    load_after = " ".join(f"{value:.2f}" for value in os.getloadavg())
    lines = header + [f"Load average after: {load_after}.", "",
                      f"Command: `{' '.join(['python', 'benchmarks/' + Path(sys.argv[0]).name] + sys.argv[1:])}`", ""]
    print("\n".join(lines + body))
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(f"# {title}\n\n" + "\n".join(lines + body) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
