"""Tokenization throughput: tfbert's tokenizers beside Hugging Face `tokenizers`, the reference libraries
(sentencepiece, tiktoken) and keras-hub's tokenizers of the same vocabularies.

Same text, same batches, same process. TF tokenizers run in a `tf.function` over pre-built string
batches; every contender gets one warm-up pass over all batches (this fills the BPE caches), then
the best of `repeats` timed passes, contenders taking turns, is reported, as MB/s (wall clock) and
MB per CPU-second of this process (steadier on a shared machine; Python peers with threads use
more than one core), each also over the family's first row. "ids equal reference" says whether a
contender's ids equal the first row's on every line. Hugging Face's `encode_batch` (the WordPiece
reference) computes offsets too, so the WordPiece family also has the same-work rows: Hugging Face's
ids-only `encode_batch_fast` and tfbert's `tokenize_with_offsets`. `latency_table` times single strings, each a batch of one, contenders taking turns
string by string. Contenders whose library is not installed are left out with a note.

Example:
    >>> table = measure(corpus()[:512], batch_sizes=[256], repeats=1)  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import os
import statistics
from typing import Callable

from benchmarks.lab import peers
from benchmarks.lab.assets import asset, wikipedia_text_lines
from benchmarks.lab.report import Table
from benchmarks.lab.timing import alternate, seconds, wall_and_cpu

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
WORDPIECE = "WordPiece (MiniLM, uncased)"
SENTENCEPIECE = "SentencePiece (Botchan unigram)"
BYTE_BPE = "Byte-level BPE (GPT-2)"


@dataclasses.dataclass(frozen=True)
class Contender:
    """One tokenizer of a family; `make()` returns (run on a batch, outputs -> id lists, batch kind `py`/`tf`).
    `same_work` marks the rows that only restate a comparison with equal work on both sides."""

    family: str
    name: str
    needs: tuple[str, ...]
    make: Callable[[], tuple[Callable, Callable, str]]
    same_work: bool = False


def corpus() -> list[str]:
    """Every article line of the Wikipedia sample, then every non-empty Botchan line (32,949 lines, 6.2 MB)."""
    lines = wikipedia_text_lines(asset("text/enwiki-sample.xml.bz2"))
    lines += [line for line in asset("text/botchan.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines


def tf_contender(tokenize):
    """A TF tokenizer's `tokenize` in a `tf.function`, on tensors of strings."""
    import tensorflow as tf

    compiled = tf.function(tokenize)
    return lambda batch: compiled(batch), lambda out: out.to_list(), "tf"


def hf_tokenizer(tokenizer):
    """Hugging Face `tokenizers`' `encode_batch` on Python lists of strings."""
    return lambda batch: tokenizer.encode_batch(batch, add_special_tokens=False), lambda out: [e.ids for e in out], "py"


def hf_wordpiece(ids_only: bool = False):
    """MiniLM's tokenizer.json; `encode_batch` gives ids and offsets (the reference), `encode_batch_fast`
    ids only (the same work as tfbert's `tokenize`)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(asset("minilm/tokenizer.json")))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    tokenizer.encode_special_tokens = True
    if ids_only:
        return (lambda batch: tokenizer.encode_batch_fast(batch, add_special_tokens=False),
                lambda out: [e.ids for e in out], "py")
    return hf_tokenizer(tokenizer)


def tfbert_tokenizer(family: str, **options):
    """A new tfbert tokenizer of `family`'s vocabulary (`options` go to its class)."""
    from tfbert.text import BytePairTokenizer, SentencePieceTokenizer, WordPieceTokenizer

    if family == WORDPIECE:
        return WordPieceTokenizer(asset("minilm/vocab.txt"), **options)
    if family == SENTENCEPIECE:
        return SentencePieceTokenizer(asset("spm/botchan_en_unigram_1000.model"), **options)
    return BytePairTokenizer.from_tiktoken(asset("bpe/gpt2.tiktoken"), **options)


def tfbert_wordpiece(with_offsets: bool = False):
    """`tokenize` (ids), or `tokenize_with_offsets` (ids and offsets, the reference's work)."""
    import tensorflow as tf

    tokenizer = tfbert_tokenizer(WORDPIECE)
    if not with_offsets:
        return tf_contender(tokenizer.tokenize)
    compiled = tf.function(tokenizer.tokenize_with_offsets)
    return lambda batch: compiled(batch), lambda out: out[0].to_list(), "tf"


def keras_hub_wordpiece():
    import keras_hub

    return tf_contender(keras_hub.tokenizers.WordPieceTokenizer(
        vocabulary=str(asset("minilm/vocab.txt")), lowercase=True, strip_accents=True).tokenize)


def spm_library():
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(asset("spm/botchan_en_unigram_1000.model")))
    return lambda batch: processor.encode(batch, num_threads=os.cpu_count()), lambda out: out, "py"


def tfbert_sentencepiece(exact: bool = True):
    return tf_contender(tfbert_tokenizer(SENTENCEPIECE, exact=exact).tokenize)


def keras_hub_sentencepiece():
    import keras_hub

    return tf_contender(keras_hub.tokenizers.SentencePieceTokenizer(
        proto=str(asset("spm/botchan_en_unigram_1000.model"))).tokenize)


@functools.cache
def gpt2_tokenizer():
    """tfbert's GPT-2 byte-level BPE tokenizer (built once: about 3 s)."""
    return tfbert_tokenizer(BYTE_BPE)


def tiktoken_gpt2():
    import tiktoken

    ranks = {}
    for line in asset("bpe/gpt2.tiktoken").read_text().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    encoding = tiktoken.Encoding("gpt2-local", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                                 special_tokens={"<|endoftext|>": 50256})
    return lambda batch: encoding.encode_ordinary_batch(batch), lambda out: out, "py"


def hf_byte_bpe():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    gpt2 = gpt2_tokenizer()
    vocabulary = {token: index for index, token in enumerate(gpt2.vocabulary())}
    tokenizer = Tokenizer(models.BPE(vocabulary, [tuple(merge.split(" ")) for merge in gpt2.merges()]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return hf_tokenizer(tokenizer)


def keras_hub_bpe():
    import keras_hub

    gpt2 = gpt2_tokenizer()
    vocabulary = {token: index for index, token in enumerate(gpt2.vocabulary())}
    return tf_contender(keras_hub.tokenizers.BytePairTokenizer(vocabulary=vocabulary, merges=gpt2.merges()).tokenize)


CONTENDERS = (
    Contender(WORDPIECE, "HF tokenizers encode_batch", ("tokenizers",), hf_wordpiece),
    Contender(WORDPIECE, "tfbert WordPieceTokenizer", (), tfbert_wordpiece),
    Contender(WORDPIECE, "keras-hub WordPieceTokenizer", ("keras-hub",), keras_hub_wordpiece),
    Contender(WORDPIECE, "HF tokenizers encode_batch_fast (ids only)", ("tokenizers",), lambda: hf_wordpiece(ids_only=True),
              same_work=True),
    Contender(WORDPIECE, "tfbert WordPieceTokenizer.tokenize_with_offsets", (), lambda: tfbert_wordpiece(with_offsets=True),
              same_work=True),
    Contender(SENTENCEPIECE, "sentencepiece encode (threads)", ("sentencepiece",), spm_library),
    Contender(SENTENCEPIECE, "tfbert SentencePieceTokenizer", (), tfbert_sentencepiece),
    Contender(SENTENCEPIECE, "tfbert SentencePieceTokenizer(exact=False)", (), lambda: tfbert_sentencepiece(False)),
    Contender(SENTENCEPIECE, "keras-hub SentencePieceTokenizer", ("keras-hub",), keras_hub_sentencepiece),
    Contender(BYTE_BPE, "tiktoken encode_ordinary_batch", ("tiktoken",), tiktoken_gpt2),
    Contender(BYTE_BPE, "HF tokenizers encode_batch", ("tokenizers",), hf_byte_bpe),
    Contender(BYTE_BPE, "tfbert BytePairTokenizer", (), lambda: tf_contender(gpt2_tokenizer().tokenize)),
    Contender(BYTE_BPE, "keras-hub BytePairTokenizer", ("keras-hub",), keras_hub_bpe),
)


def measure_shards(lines: list[str], batch_sizes: list[int], repeats: int, shard_counts: list[int],
                   only: str = "") -> Table:
    """tfbert's tokenizers with each batch cut into each of `shard_counts` shards (`Tokenizer.shards`), passes
    alternating in one process: MB/s, MB per CPU-second and the speed over the first shard count."""
    megabytes = sum(len(line.encode()) for line in lines) / 1e6
    table = Table("Tokenization, a batch over the cores", ["tokenizer", "batch", "shards", "MB/s", "MB per CPU-s",
                                                           f"wall vs {shard_counts[0]}", f"CPU vs {shard_counts[0]}"], [],
                  setup=[corpus_setup(lines, megabytes)], align="lrrrrrr")
    for family in (WORDPIECE, SENTENCEPIECE, BYTE_BPE):
        if only not in family:
            continue
        runs = {}
        for count in shard_counts:
            tokenizer = tfbert_tokenizer(family)
            tokenizer.shards = count  # read when the function is traced
            runs[count] = tf_contender(tokenizer.tokenize)[0]
        for batch_size in batch_sizes:
            batches = tf_batches(lines, batch_size)
            for run in runs.values():
                run_batches(run, batches)
            wall, cpu = best_passes({count: functools.partial(run_batches, run, batches) for count, run in runs.items()},
                                    repeats)
            first = shard_counts[0]
            table.rows += [[family, str(batch_size), str(count), f"{megabytes / wall[count]:.2f}",
                            f"{megabytes / cpu[count]:.2f}", f"{wall[first] / wall[count]:.2f}x",
                            f"{cpu[first] / cpu[count]:.2f}x"] for count in shard_counts]
    return table


def measure_eager(lines: list[str], batch_sizes: list[int], repeats: int, only: str = "") -> Table:
    """tfbert's tokenizers called eagerly, batch after batch (an evaluation loop), as they are (one traced shard
    function kept per method) beside a fresh trace on every call (`fresh`: how every eager call ran before the
    tokenizer kept its function), passes alternating in one process."""
    megabytes = sum(len(line.encode()) for line in lines) / 1e6
    table = Table("Tokenization, eager calls", ["tokenizer", "batch", "calls", "kept ms per call", "fresh ms per call",
                                                "fresh / kept (CPU)"], [],
                  setup=[corpus_setup(lines, megabytes)], align="lrrrrr")
    for family in (WORDPIECE, SENTENCEPIECE, BYTE_BPE):
        if only not in family:
            continue
        tokenizer = tfbert_tokenizer(family)

        def fresh(batch):
            tokenizer._shard_functions.clear()
            return tokenizer.tokenize(batch)

        for batch_size in batch_sizes:
            batches = tf_batches(lines, batch_size)
            run_batches(tokenizer.tokenize, batches)
            _, cpu = best_passes({"kept": functools.partial(run_batches, tokenizer.tokenize, batches),
                                  "fresh": functools.partial(run_batches, fresh, batches)}, repeats)
            per_call = {name: 1000 * seconds / len(batches) for name, seconds in cpu.items()}
            table.rows.append([family, str(batch_size), str(len(batches)), f"{per_call['kept']:.1f}",
                               f"{per_call['fresh']:.1f}", f"{cpu['fresh'] / cpu['kept']:.1f}x"])
    return table


def corpus_setup(lines: list[str], megabytes: float) -> str:
    """The setup line of a throughput table: the text, the cores, TensorFlow's version."""
    import tensorflow as tf

    return f"{len(lines)} lines, {megabytes:.2f} MB; {os.cpu_count()} CPU cores; TF {tf.__version__}"


def tf_batches(lines: list[str], batch_size: int) -> list:
    """`lines` as string tensors of `batch_size` (the last one shorter)."""
    import tensorflow as tf

    return [tf.constant(lines[i:i + batch_size]) for i in range(0, len(lines), batch_size)]


def best_passes(passes: dict[str, Callable[[], object]], repeats: int) -> tuple[dict, dict]:
    """The best wall-clock and the best CPU seconds of each pass over `repeats` rounds, passes taking turns."""
    timings = alternate(passes, repeats, clock=wall_and_cpu)
    return ({name: min(wall for wall, _ in pairs) for name, pairs in timings.items()},
            {name: min(cpu for _, cpu in pairs) for name, pairs in timings.items()})


def run_batches(run: Callable, batches: list) -> None:
    """One pass of `run` over `batches`, outputs dropped."""
    for batch in batches:
        run(batch)


def measure(lines: list[str], batch_sizes: list[int], repeats: int, only: str = "", latency: int = 0,
            same_work: bool = True) -> list[Table]:
    """The tokenization table over `lines`: a row per installed contender (of families containing `only`;
    without the same-work rows unless `same_work`) and batch size, with its speed over the family's first row,
    and a note per peer left out; with `latency`, also the batch-1 latency table over that many single strings."""
    megabytes = sum(len(line.encode()) for line in lines) / 1e6
    chosen = [contender for contender in CONTENDERS
              if only in contender.family and (same_work or not contender.same_work)]
    absent = peers.missing(sorted({peer for contender in chosen for peer in contender.needs}))
    table = Table("Tokenization", ["tokenizer", "implementation", "batch", "MB/s", "MB per CPU-s",
                                   "wall vs reference", "CPU vs reference", "ids equal reference"], [],
                  setup=[corpus_setup(lines, megabytes)], align="llrrrrrl")
    families: dict[str, list] = {}
    for contender in chosen:
        if not set(contender.needs) & set(absent):
            families.setdefault(contender.family, []).append((contender.name, *contender.make()))
    for family, members in families.items():
        for batch_size in batch_sizes:
            table.rows += family_rows(family, members, lines, batch_size, repeats, megabytes)
    table.notes += [peers.skipped_note(peer) for peer in absent]
    if not latency:
        return [table]
    latencies = Table("Tokenization, batch-1 latency", ["tokenizer", "implementation", "batch 1 median ms",
                                                        "batch 1 p99 ms"], [], align="llrr",
                      setup=[f"{latency} single strings (every k-th corpus line), each a batch of one, "
                             "contenders taking turns string by string"])
    for family, members in families.items():
        latencies.rows += latency_rows(family, members, lines, latency)
    return [table, latencies]


def latency_rows(family: str, members: list, lines: list[str], count: int) -> list[list[str]]:
    """Median and p99 milliseconds of single-string calls, contenders taking turns per string."""
    import tensorflow as tf

    singles = lines[::max(1, len(lines) // count)][:count]
    inputs = {"py": [[line] for line in singles], "tf": [tf.constant([line]) for line in singles]}
    for _, run, _, kind in members:
        for batch in inputs[kind][:20]:  # warm-up: traces the batch-of-one shape
            run(batch)
    times: dict[str, list[float]] = {name: [] for name, *_ in members}
    for index in range(len(singles)):
        for name, run, _, kind in members:
            times[name].append(1000 * seconds(lambda: run(inputs[kind][index])))
    rows = []
    for name, *_ in members:
        ordered = sorted(times[name])
        p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
        rows.append([family, name, f"{statistics.median(ordered):.3f}", f"{p99:.3f}"])
    return rows


def family_rows(family: str, members: list, lines: list[str], batch_size: int, repeats: int,
                megabytes: float) -> list[list[str]]:
    """One family's rows at one batch size, with each one's wall-clock and CPU speed over the family's first row."""
    inputs = {"py": [lines[i:i + batch_size] for i in range(0, len(lines), batch_size)],
              "tf": tf_batches(lines, batch_size)}
    ids = {}
    for name, run, to_list, kind in members:
        ids[name] = [row for batch in inputs[kind] for row in to_list(run(batch))]  # warm-up pass; also the ids
    best, best_cpu = best_passes({name: functools.partial(run_batches, run, inputs[kind])
                                  for name, run, _, kind in members}, repeats)
    reference_name = members[0][0]
    reference = ids[reference_name]
    rows = []
    for name, *_ in members:
        differing = sum(a != b for a, b in zip(reference, ids[name]))
        same = ("reference" if name == reference_name
                else "yes" if differing == 0 else f"no: {differing} of {len(reference)} lines differ")
        rows.append([family, name, str(batch_size), f"{megabytes / best[name]:.2f}",
                     f"{megabytes / max(best_cpu[name], 1e-9):.2f}", f"{best[reference_name] / best[name]:.2f}x",
                     f"{best_cpu[reference_name] / max(best_cpu[name], 1e-9):.2f}x", same])
    return rows
