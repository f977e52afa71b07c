"""Byte-level BPE (GPT-2, RoBERTa) written in TensorFlow ops.

TF-Text has no byte-level BPE op, so this is hand-written, after the scheme keras-hub uses:
split the text into pieces with the GPT-2 regular expression, then merge byte pairs in a
`tf.while_loop` driven by a `tf.lookup` table of merge ranks, with a mutable cache of pieces
already merged. It runs inside `tf.function`, `tf.data` and SavedModels (no `py_function`).

Internally every token is its raw bytes, not GPT-2's printable byte alphabet: the input never
needs remapping, and "\\xff" (a byte valid UTF-8 never contains) can join a pair into one key.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Mapping, Sequence

import tensorflow as tf

from tfbert.artifacts.layout import TOKENIZER_CONFIG_FILE as CONFIG_FILE
from tfbert.text._files import PathLike, existing_file, read_json, read_lines
from tfbert.text.base import Tokenizer, as_utf8, roles_in_config

VOCAB_FILE = "vocab.json"
MERGES_FILE = "merges.txt"

# Python's and tiktoken's `\s` is Unicode White_Space; RE2's `\s` is ASCII only, so spell it out.
_SPACE = r"\t\n\x{0B}\x{0C}\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}"
# GPT-2's pattern, 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+, without
# the look-ahead, which RE2 lacks: whitespace is cut into single characters here and regrouped by
# `_regroup_spaces`.
_PIECE = rf"'s|'t|'re|'ve|'m|'ll|'d| ?\p{{L}}+| ?\p{{N}}+| ?[^{_SPACE}\p{{L}}\p{{N}}]+|[{_SPACE}]"
# A byte valid UTF-8 never contains: it marks piece starts, and joins a pair into one merge key.
_PAIR_SEPARATOR = b"\xff"
_NO_MERGE = 2**31 - 1
_FINGERPRINT_RANGE = 2**63 - 1

ROBERTA_SPECIAL_TOKENS = {"cls": "<s>", "sep": "</s>", "pad": "<pad>", "mask": "<mask>", "unk": "<unk>", "bos": "<s>", "eos": "</s>"}
GPT2_END_OF_TEXT = "<|endoftext|>"


def byte_alphabet() -> dict[int, str]:
    """GPT-2's map from each byte to a printable character, as vocab.json and merges.txt spell tokens."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    alphabet, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            alphabet[byte] = chr(byte)
        else:
            alphabet[byte] = chr(256 + extra)
            extra += 1
    return alphabet


_TO_BYTE = {char: byte for byte, char in byte_alphabet().items()}
_TO_CHAR = byte_alphabet()


def _token_bytes(token: str) -> bytes | None:
    """Raw bytes of a vocab.json token; None for tokens outside the byte alphabet (added tokens)."""
    if all(char in _TO_BYTE for char in token):
        return bytes(_TO_BYTE[char] for char in token)
    return None


def _shift_left(values: tf.Tensor, fill) -> tf.Tensor:
    """values[i + 1] at i, `fill` at the end."""
    return tf.concat([values, [fill]], 0)[1:]


def _shift_right(values: tf.Tensor, fill) -> tf.Tensor:
    """values[i - 1] at i, `fill` at the start."""
    return tf.concat([[fill], values], 0)[:-1]


def _regroup_spaces(pieces: tf.RaggedTensor) -> tf.RaggedTensor:
    """Joins single-whitespace pieces into GPT-2's runs. A run is one piece, except that a run followed
    by text that did not take the run's last space (" word") leaves its last character on its own."""
    flat = pieces.flat_values
    rows = pieces.value_rowids()
    is_space = tf.strings.regex_full_match(flat, f"[{_SPACE}]")
    same_row_as_next = _shift_left(rows, -1) == rows
    previous_is_space = _shift_right(is_space & same_row_as_next, False)
    bare_text_follows = _shift_left(~is_space & ~tf.strings.regex_full_match(flat, " .*"), False) & same_row_as_next
    starts = ~(is_space & previous_is_space & ~bare_text_follows)
    group = tf.cumsum(tf.cast(starts, tf.int32)) - 1
    joined = tf.strings.unsorted_segment_join(flat, group, tf.reduce_sum(tf.cast(starts, tf.int32)))
    return tf.RaggedTensor.from_value_rowids(joined, tf.boolean_mask(rows, starts), nrows=pieces.nrows())


def split_pieces(strings: tf.Tensor) -> tf.RaggedTensor:
    """GPT-2's pre-tokenization of strings [batch] into pieces (RaggedTensor [batch, pieces]) that tile the text."""
    # TF-Text's regex_split runs this Unicode pattern at ~1.5 MB per CPU-second (RE2 re-searches for
    # every piece); one global replace that marks each piece's start, then a plain split, does the
    # same cut ~7x faster. Every character is in some alternative, so the pieces tile the text.
    marked = tf.strings.regex_replace(as_utf8(strings), _PIECE, _PAIR_SEPARATOR + b"\\0")
    return _regroup_spaces(tf.strings.split(marked, _PAIR_SEPARATOR)[:, 1:])



class BytePairTokenizer(Tokenizer):
    """GPT-2 / RoBERTa byte-level BPE as a `tf.Module`.

    `vocabulary` is a vocab.json path or dict (token -> id), `merges` a merges.txt path or list of
    "a b" strings, both in GPT-2's byte alphabet. Ids equal GPT-2's (tiktoken) encoding.

    Example:
        >>> tokenizer = BytePairTokenizer.from_tiktoken("gpt2.tiktoken")
        >>> tokenizer.tokenize(["Hello world"])
        <tf.RaggedTensor [[15496, 995]]>
        >>> tokenizer.detokenize([[15496, 995]])
        <tf.Tensor: ... numpy=array([b'Hello world'], dtype=object)>
    """

    # The merge list (Python strings, some 50,000) is no place for variables either (see Tokenizer).
    _TF_MODULE_IGNORED_PROPERTIES = Tokenizer._TF_MODULE_IGNORED_PROPERTIES | {"_merges"}

    def __init__(
        self,
        vocabulary: PathLike | Mapping[str, int],
        merges: PathLike | Sequence[str],
        special_tokens: Mapping[str, str | None] | None = None,
        name: str | None = None,
    ):
        vocab_source = "vocabulary dict" if isinstance(vocabulary, Mapping) else f"byte-level BPE vocabulary file {vocabulary}"
        if not isinstance(vocabulary, Mapping):
            vocabulary = read_json(vocabulary, "byte-level BPE vocabulary")
        if not isinstance(vocabulary, Mapping) or not vocabulary:
            raise ValueError(f"{vocab_source} must be a non-empty JSON object of token -> id")
        if not all(isinstance(i, int) for i in vocabulary.values()):
            raise ValueError(f"{vocab_source} has ids that are not integers")
        size = max(vocabulary.values()) + 1
        if sorted(vocabulary.values()) != list(range(size)):
            raise ValueError(f"{vocab_source} ids are not the distinct numbers 0..{size - 1}")
        tokens = [""] * size
        for token, index in vocabulary.items():
            tokens[index] = token
        merge_lines = list(merges) if not isinstance(merges, (str, Path)) else read_lines(merges, "byte-level BPE merges")
        merge_source = "merges list" if not isinstance(merges, (str, Path)) else f"byte-level BPE merges file {merges}"
        pairs = [line for line in merge_lines if line and not line.startswith("#version")]
        for number, line in enumerate(pairs):
            parts = line.split(" ")
            if len(parts) != 2 or not all(parts):
                raise ValueError(f"{merge_source}: merge {number} {line!r} is not two tokens separated by one space")
        present = set(tokens)
        specials = {role: token for role, token in ROBERTA_SPECIAL_TOKENS.items() if token in present}
        if GPT2_END_OF_TEXT in present:
            for role in ("bos", "eos", "cls", "sep"):
                specials.setdefault(role, GPT2_END_OF_TEXT)
        specials.update(special_tokens or {})
        super().__init__(tokens, specials, name=name)
        self._merges = pairs

        byte_tokens = [_token_bytes(token) for token in tokens]
        for byte in range(256):
            if _TO_CHAR[byte] not in present:
                raise ValueError(f"{vocab_source} lacks the single-byte token {_TO_CHAR[byte]!r}; it is not byte-level")
        keys = [raw for raw in byte_tokens if raw is not None]
        self._byte_token_ids = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(keys, tf.string), tf.constant([i for i, raw in enumerate(byte_tokens) if raw is not None], tf.int32)
            ),
            default_value=-1,
        )
        self._id_bytes = tf.constant([raw if raw is not None else token.encode() for raw, token in zip(byte_tokens, tokens)], tf.string)
        pair_keys = []
        for line in pairs:
            left, right = (_token_bytes(part) for part in line.split(" "))
            if left is None or right is None:
                raise ValueError(f"{merge_source}: merge {line!r} has characters outside GPT-2's byte alphabet")
            pair_keys.append(left + _PAIR_SEPARATOR + right)
        self._merge_ranks = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(pair_keys, tf.string), tf.range(len(pair_keys), dtype=tf.int32)
            ),
            default_value=_NO_MERGE,
        )
        # TF has no string -> string mutable table, so the cache is keyed by a 63-bit fingerprint of the
        # piece (a collision among a million cached pieces has odds of about 1e-7).
        self._cache = tf.lookup.experimental.MutableHashTable(tf.int64, tf.string, default_value="")

    @classmethod
    def from_tiktoken(
        cls, path: PathLike, special_tokens: Mapping[str, int] | None = None, roles: Mapping[str, str | None] | None = None
    ) -> "BytePairTokenizer":
        """Builds the tokenizer from a tiktoken ranks file ("base64-token rank" per line), such as gpt2.tiktoken.

        The merges are recovered by running BPE on each token with only the lower ranks allowed,
        which must leave exactly two parts. `special_tokens` defaults to GPT-2's `<|endoftext|>`: 50256.
        """
        ranks: dict[bytes, int] = {}
        for number, line in enumerate(read_lines(path, "tiktoken ranks")):
            parts = line.split()
            if not parts:
                continue
            try:
                token, rank = base64.b64decode(parts[0], validate=True), int(parts[1])
                if len(parts) != 2:
                    raise ValueError
            except (ValueError, IndexError):
                raise ValueError(f"tiktoken ranks file {path}: line {number + 1} {line[:60]!r} is not 'base64-token rank'") from None
            ranks[token] = rank
        special_tokens = {GPT2_END_OF_TEXT: 50256} if special_tokens is None else dict(special_tokens)
        vocabulary = {"".join(_TO_CHAR[b] for b in token): rank for token, rank in ranks.items()}
        vocabulary.update(special_tokens)
        merges = []
        for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
            if len(token) < 2:
                continue
            parts = _merge_with_ranks(token, ranks, below=rank)
            if len(parts) != 2:
                raise ValueError(f"tiktoken ranks file {path}: token of rank {rank} cannot be built from two lower-ranked tokens")
            merges.append(" ".join("".join(_TO_CHAR[b] for b in part) for part in parts))
        return cls(vocabulary, merges, special_tokens=roles)

    def _merge_pieces(self, pieces: tf.Tensor) -> tf.RaggedTensor:
        """BPE on each piece (1-D string tensor) -> RaggedTensor of byte tokens. Each round merges, in every
        piece, all non-overlapping occurrences (left to right) of its lowest-ranked adjacent pair."""
        symbols = tf.strings.bytes_split(pieces)
        nrows = symbols.nrows(out_type=tf.int64)

        def merge_round(flat, rows, _):
            count = tf.size(flat, out_type=tf.int64)
            has_next = _shift_left(rows, -1) == rows
            following = _shift_left(flat, "")
            ranks = tf.where(has_next, self._merge_ranks.lookup(tf.strings.join([flat, following], separator=_PAIR_SEPARATOR)), _NO_MERGE)
            best = tf.gather(tf.math.unsorted_segment_min(ranks, rows, nrows), rows)
            hit = (ranks == best) & (ranks != _NO_MERGE)
            run_start = hit & ~_shift_right(hit, False)
            positions = tf.range(count)
            run = tf.maximum(tf.cumsum(tf.cast(run_start, tf.int64)) - 1, 0)
            first = tf.gather(tf.concat([tf.boolean_mask(positions, run_start), [0]], 0), run)
            merge_here = hit & ((positions - first) % 2 == 0)
            keep = ~_shift_right(merge_here, False)
            merged = tf.where(merge_here, tf.strings.join([flat, following]), flat)
            return tf.boolean_mask(merged, keep), tf.boolean_mask(rows, keep), tf.reduce_any(hit)

        flat, rows, _ = tf.while_loop(
            lambda flat, rows, changed: changed,
            merge_round,
            (symbols.flat_values, symbols.value_rowids(), tf.constant(True)),
            shape_invariants=(tf.TensorShape([None]), tf.TensorShape([None]), tf.TensorShape([])),
        )
        return tf.RaggedTensor.from_value_rowids(flat, rows, nrows=nrows)

    def _byte_tokens(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """Raw-byte BPE tokens of each string: RaggedTensor [batch, tokens]."""
        pieces = split_pieces(strings)
        distinct, where_from = tf.unique(pieces.flat_values)
        fingerprints = tf.strings.to_hash_bucket_fast(distinct, _FINGERPRINT_RANGE)
        cached = self._cache.lookup(fingerprints)
        missing = tf.where(cached == "")
        new_pieces = tf.ensure_shape(tf.gather(distinct, missing[:, 0]), [None])
        fresh = tf.strings.reduce_join(self._merge_pieces(new_pieces), axis=1, separator=_PAIR_SEPARATOR)
        self._cache.insert(tf.gather(fingerprints, missing[:, 0]), fresh)
        merged = tf.tensor_scatter_nd_update(cached, missing, fresh)
        per_piece = tf.gather(tf.strings.split(merged, _PAIR_SEPARATOR), where_from)
        return pieces.with_flat_values(per_piece).merge_dims(1, 2)

    def _batch(self, strings, with_offsets: bool):
        strings = tf.convert_to_tensor(strings, tf.string)
        if strings.shape.rank == 0:
            return tuple(part[0] for part in self._rows(strings[None], with_offsets))
        return self._in_shards(f"rows/{with_offsets}", lambda rows: self._rows(rows, with_offsets), strings)

    def _rows(self, strings: tf.Tensor, with_offsets: bool):
        tokens = self._byte_tokens(strings)
        ids = tokens.with_flat_values(self._byte_token_ids.lookup(tokens.flat_values))
        if not with_offsets:
            return (ids,)
        lengths = tf.cast(tf.strings.length(tokens.flat_values), tf.int64)
        ends_total = tf.cumsum(lengths)
        row_base = tf.gather(tf.concat([[0], ends_total], 0), tf.gather(tokens.row_splits, tokens.value_rowids()))
        ends = ends_total - row_base
        return ids, tokens.with_flat_values(ends - lengths), tokens.with_flat_values(ends)

    def tokenize(self, strings) -> tf.RaggedTensor:
        """Ids without special tokens: a RaggedTensor [batch, tokens] of int32 (1-D for a scalar input)."""
        return self._batch(strings, with_offsets=False)[0]

    def tokenize_with_offsets(self, strings):
        """(ids, starts, ends): byte offsets (int64) of each token; tokens tile the input exactly."""
        return self._batch(strings, with_offsets=True)

    def detokenize(self, ids) -> tf.Tensor:
        """The bytes the ids stand for, joined (special tokens as their text)."""
        if not isinstance(ids, tf.RaggedTensor):
            ids = tf.convert_to_tensor(ids)
            if ids.shape.rank == 1:
                return tf.strings.reduce_join(tf.gather(self._id_bytes, ids))
            ids = tf.RaggedTensor.from_tensor(ids)
        return tf.strings.reduce_join(ids.with_flat_values(tf.gather(self._id_bytes, ids.flat_values)), axis=-1)

    def merges(self) -> list[str]:
        """The merge list ("a b" per merge, highest priority first)."""
        return list(self._merges)

    def save_assets(self, directory: PathLike) -> None:
        """Writes vocab.json, merges.txt and tokenizer_config.json, which `from_directory` reads."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        vocabulary = {token: index for index, token in enumerate(self._tokens)}
        (directory / VOCAB_FILE).write_text(json.dumps(vocabulary, ensure_ascii=False), encoding="utf-8")
        (directory / MERGES_FILE).write_text("#version: 0.2\n" + "".join(m + "\n" for m in self._merges), encoding="utf-8")
        config = {"class": "BytePairTokenizer", "special_tokens": self.special_tokens}
        (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")

    @classmethod
    def from_directory(cls, directory: PathLike) -> "BytePairTokenizer":
        directory = Path(directory)
        config_path = directory / CONFIG_FILE
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
        existing_file(directory / VOCAB_FILE, "byte-level BPE vocabulary")
        return cls(directory / VOCAB_FILE, directory / MERGES_FILE, special_tokens=roles_in_config(config))


def _merge_with_ranks(token: bytes, ranks: Mapping[bytes, int], below: int) -> list[bytes]:
    """tiktoken's BPE on one token's bytes: repeatedly merge the adjacent pair whose concatenation
    has the lowest rank (< `below`); used only to recover merges from a ranks file."""
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best_rank, best_at = below, -1
        for at in range(len(parts) - 1):
            rank = ranks.get(parts[at] + parts[at + 1])
            if rank is not None and rank < best_rank:
                best_rank, best_at = rank, at
        if best_at < 0:
            break
        parts[best_at : best_at + 2] = [parts[best_at] + parts[best_at + 1]]
    return parts
