"""Tokenization throughput: tfbert tokenizers beside Hugging Face `tokenizers`, the reference
libraries (sentencepiece, tiktoken) and keras-hub's tokenizers of the same vocabularies.

Same text, same batches, same process. TF tokenizers run in a `tf.function` over pre-built
string batches; every contender gets one warm-up pass over all batches (this fills the BPE
caches), then the best of `--repeats` timed passes is reported. "ids" says whether a contender's
ids equal the reference's on every line.

    python benchmarks/tokenize.py                 # Wikipedia sample + Botchan, ~6 MB
    python benchmarks/tokenize.py --batch-sizes 256 1024 4096 --repeats 3
    python benchmarks/tokenize.py --only Byte --latency 300   # plus single-string latency

Beside MB/s (wall clock) each row gives MB per CPU-second of this process (steadier on a shared
machine; Python peers with threads use more than one core). `--latency N` adds a table of
batch-1 latency: N single strings (every k-th corpus line), each a batch of one, contenders
taking turns string by string; median and p99 in milliseconds.
"""

from __future__ import annotations

import sys

# Run as a script, this file's folder comes first on sys.path, and its name would shadow the
# standard library's `tokenize` module (which linecache imports); drop that entry first.
if sys.path and sys.path[0] and __file__.startswith(sys.path[0]):
    sys.path.pop(0)

import argparse
import base64
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import tensorflow as tf  # noqa: E402
from assets import asset, wikipedia_text_lines  # noqa: E402

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def corpus() -> list[str]:
    lines = wikipedia_text_lines(asset("text/enwiki-sample.xml.bz2"))
    lines += [line for line in asset("text/botchan.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines


def timed_pass(run, batches) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one pass over the batches."""
    start, cpu = time.perf_counter(), time.process_time()
    for batch in batches:
        run(batch)
    return time.perf_counter() - start, time.process_time() - cpu


def latency_table(family: str, members, lines: list[str], count: int) -> None:
    """Median and p99 milliseconds of single-string calls, contenders taking turns per string."""
    step = max(1, len(lines) // count)
    singles = lines[::step][:count]
    inputs = {"py": [[line] for line in singles], "tf": [tf.constant([line]) for line in singles]}
    times: dict[str, list[float]] = {name: [] for name, *_ in members}
    for name, run, _, kind in members:
        for batch in inputs[kind][:20]:  # warm-up: traces the batch-of-one shape
            run(batch)
    for index in range(len(singles)):
        for name, run, _, kind in members:
            start = time.perf_counter()
            run(inputs[kind][index])
            times[name].append((time.perf_counter() - start) * 1000)
    for name, *_ in members:
        ordered = sorted(times[name])
        p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
        print(f"| {family} | {name} | {statistics.median(ordered):.3f} | {p99:.3f} |", flush=True)


def tf_contender(tokenize):
    compiled = tf.function(tokenize)
    return lambda batch: compiled(batch), lambda out: out.to_list(), "tf"


def contenders():
    """(family, name, make) triples; `make()` returns (run on a batch, outputs -> list of id lists, batch kind)."""
    import keras_hub
    import sentencepiece
    import tiktoken
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    from tfbert.text import BytePairTokenizer, SentencePieceTokenizer, WordPieceTokenizer

    def hf_wordpiece():
        tokenizer = Tokenizer.from_file(str(asset("minilm/tokenizer.json")))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        tokenizer.encode_special_tokens = True
        return lambda batch: tokenizer.encode_batch(batch, add_special_tokens=False), lambda out: [e.ids for e in out], "py"

    def keras_hub_wordpiece():
        tokenizer = keras_hub.tokenizers.WordPieceTokenizer(vocabulary=str(asset("minilm/vocab.txt")), lowercase=True, strip_accents=True)
        return tf_contender(tokenizer.tokenize)

    spm_model = asset("spm/botchan_en_unigram_1000.model")

    def spm_library():
        processor = sentencepiece.SentencePieceProcessor(model_file=str(spm_model))
        return lambda batch: processor.encode(batch, num_threads=os.cpu_count()), lambda out: out, "py"

    def keras_hub_spm():
        tokenizer = keras_hub.tokenizers.SentencePieceTokenizer(proto=str(spm_model))
        return tf_contender(tokenizer.tokenize)

    wordpiece = WordPieceTokenizer(asset("minilm/vocab.txt"))
    gpt2 = BytePairTokenizer.from_tiktoken(asset("bpe/gpt2.tiktoken"))
    vocabulary = {token: index for index, token in enumerate(gpt2.vocabulary())}

    def tiktoken_gpt2():
        ranks = {}
        for line in asset("bpe/gpt2.tiktoken").read_text().splitlines():
            if line:
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
        encoding = tiktoken.Encoding("gpt2-local", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256})
        return lambda batch: encoding.encode_ordinary_batch(batch), lambda out: out, "py"

    def hf_byte_bpe():
        merges = [tuple(merge.split(" ")) for merge in gpt2.merges()]
        tokenizer = Tokenizer(models.BPE(vocabulary, merges))
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        return lambda batch: tokenizer.encode_batch(batch, add_special_tokens=False), lambda out: [e.ids for e in out], "py"

    def keras_hub_bpe():
        tokenizer = keras_hub.tokenizers.BytePairTokenizer(vocabulary=vocabulary, merges=gpt2.merges())
        return tf_contender(tokenizer.tokenize)

    return [
        ("WordPiece (MiniLM, uncased)", "HF tokenizers encode_batch", hf_wordpiece),
        ("WordPiece (MiniLM, uncased)", "tfbert WordPieceTokenizer", lambda: tf_contender(wordpiece.tokenize)),
        ("WordPiece (MiniLM, uncased)", "keras-hub WordPieceTokenizer", keras_hub_wordpiece),
        ("SentencePiece (Botchan unigram)", "sentencepiece encode (threads)", spm_library),
        ("SentencePiece (Botchan unigram)", "tfbert SentencePieceTokenizer", lambda: tf_contender(SentencePieceTokenizer(spm_model).tokenize)),
        (
            "SentencePiece (Botchan unigram)",
            "tfbert SentencePieceTokenizer(exact=False)",
            lambda: tf_contender(SentencePieceTokenizer(spm_model, exact=False).tokenize),
        ),
        ("SentencePiece (Botchan unigram)", "keras-hub SentencePieceTokenizer", keras_hub_spm),
        ("Byte-level BPE (GPT-2)", "tiktoken encode_ordinary_batch", tiktoken_gpt2),
        ("Byte-level BPE (GPT-2)", "HF tokenizers encode_batch", hf_byte_bpe),
        ("Byte-level BPE (GPT-2)", "tfbert BytePairTokenizer", lambda: tf_contender(gpt2.tokenize)),
        ("Byte-level BPE (GPT-2)", "keras-hub BytePairTokenizer", keras_hub_bpe),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1024])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", help="run only families whose name contains this")
    parser.add_argument("--latency", type=int, default=0, metavar="N", help="also time N single strings (batch 1)")
    args = parser.parse_args()

    lines = corpus()
    megabytes = sum(len(line.encode()) for line in lines) / 1e6
    print(f"{len(lines)} lines, {megabytes:.2f} MB; {os.cpu_count()} CPU cores; TF {tf.__version__}\n")
    print("| tokenizer | implementation | batch | MB/s | MB per CPU-s | ids equal reference |")
    print("|---|---|---:|---:|---:|---|")
    families: dict[str, list] = {}
    for family, name, make in contenders():
        if args.only in family:
            families.setdefault(family, []).append((name, *make()))
    for family, members in families.items():
        for batch_size in args.batch_sizes:
            python_batches = [lines[i : i + batch_size] for i in range(0, len(lines), batch_size)]
            inputs = {
                "py": python_batches,
                "tf": [tf.constant(batch) for batch in python_batches],
            }
            ids, best = {}, {}
            for name, run, to_list, kind in members:
                outputs = [run(batch) for batch in inputs[kind]]  # warm-up pass; also the ids
                ids[name] = [row for out in outputs for row in to_list(out)]
                best[name] = (float("inf"), float("inf"))
            # Contenders take turns, so a burst of load on the machine hits all of them alike.
            for _ in range(args.repeats):
                for name, run, _, kind in members:
                    wall, cpu = timed_pass(run, inputs[kind])
                    best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
            reference = ids[members[0][0]]
            for name, *_ in members:
                differing = sum(a != b for a, b in zip(reference, ids[name]))
                same = "reference" if name == members[0][0] else ("yes" if differing == 0 else f"no: {differing} of {len(reference)} lines differ")
                wall, cpu = best[name]
                print(f"| {family} | {name} | {batch_size} | {megabytes / wall:.1f} | {megabytes / cpu:.1f} | {same} |", flush=True)
    if args.latency:
        print("\n| tokenizer | implementation | batch 1 median ms | batch 1 p99 ms |")
        print("|---|---|---:|---:|")
        for family, members in families.items():
            latency_table(family, members, lines, args.latency)


if __name__ == "__main__":
    main()
