"""sentencepiece 0.2.x unigram segmentation, exactly, in TensorFlow ops.

TF-Text bundles an older SentencePiece whose lattice Viterbi breaks ties between equal-scoring
segmentations differently from `sentencepiece` >= 0.1.97 (`Model::EncodeOptimized`), e.g.
`.......` as `......`+`.` instead of `.`+`......`. The newer encoder, in float32 throughout:

    best[0] = 0; for each character start s, in order:
        if |best[s]| > 1e5: subtract best[s] from every best[i] set so far at i >= s   (score reset)
        for each piece p (NORMAL or USER_DEFINED; UNUSED skipped) matching at s, ending at e:
            candidate = score(p) + best[s]       (USER_DEFINED: 0.1 * (bytes - 1))
            if best[e] unset or candidate > best[e]: best[e] = candidate, from s, id p
        if no piece of exactly one character matches at s:
            the same with the unknown id and score min(NORMAL scores) - 10, one character long
    backtrack from the end; consecutive unknown pieces are merged into one.

TF-Text's *other* SentencePiece kernel, the TFLite-derived `FastSentencepieceTokenize`, runs that
very recurrence (float32, strict `>`, candidates in the same order) but with its own, different
normalizer, its own unknown handling (an edge per byte, always) and no score reset. So this module:

1. normalizes with TF-Text's SentencePiece op (exactly sentencepiece's normalizer) using copies
   of the model with a trivial vocabulary, so their Viterbi is trivial and the text comes back
   whole (printable-ASCII rows skip the op: `_ascii_normalizer`, checked against sentencepiece);
2. replaces every character that occurs in no piece by a one-byte placeholder;
3. segments with `FastSentencepieceTokenize` on a converted copy of the model whose normalizer is
   the identity, whose USER_DEFINED scores are sentencepiece's, and in which the placeholder and
   each ASCII character that only occurs inside longer pieces are pieces scoring exactly
   sentencepiece's unknown edge (the kernel's own unknown edges then never win); those become the
   unknown id, and consecutive unknowns are merged;
4. emulates the score reset, which only rows of roughly 4,500+ characters can reach: the fast
   kernel's path is exact up to the first point where a score could pass 1e5; from a clean
   position there (no piece spans it) a `tf.while_loop` runs the recurrence above until the reset
   has happened and the lattice is clean again; the rest of the row goes back to the fast
   kernel, started from the value reached (a prefix of private-use characters whose pieces score
   the bits of that float32 value, so the kernel's running sums are bit-identical).

Requirements, checked when the model is loaded (`unsupported_reason`): a unigram model without
byte fallback whose characters inside longer pieces are pieces of their own unless ASCII (true of
trained models), and a spare ASCII control character for the placeholder.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from sentencepiece import sentencepiece_model_pb2 as model_pb2
from tensorflow_text.core.pybinds import pywrap_model_converter
from tensorflow_text.python.ops.fast_sentencepiece_tokenizer import gen_fast_sentencepiece_tokenizer
from tensorflow_text.python.ops.sentencepiece_tokenizer import gen_sentencepiece_tokenizer

from tfbert.text._ascii_normalizer import PRINTABLE_ASCII, AsciiNormalizer

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
UNIGRAM = 1
RESET = 100000.0  # sentencepiece's kScoreResetThreshold
UNK_PENALTY = np.float32(10.0)
SPACE = "\u2581"
# Rows are checked for the reset with this much headroom.
_SLACK = 1.02
# How far (bytes) a clean position is looked for, before a possible reset or after a chunk's end.
_CLEAN_WINDOW = 2048
# The kernel is run on chunks of about this many bytes of a long row at first.
_FIRST_CHUNK = 65536
_NEVER = "\x01\x02\x03\x04\x05"  # the normal piece of two helper models; never matters if matched
# TF-Text's SentencePiece merges a run of unknown pieces by appending one piece at a time, quadratic
# in the run's length. Rows up to _SHORT_BYTES come back as one run (fewest pieces), rows up to
# _LONG_BYTES as runs between `▁`, longer ones one piece per byte (linear, slower per byte).
_SHORT_BYTES = 1024
_LONG_BYTES = 8192
# The value prefix's negative pieces go down to -2^_UNIT_EXP; larger magnitudes repeat that piece.
_UNIT_EXP = 16


def _f32(value) -> np.float32:
    return np.float32(value)


def parse(proto: bytes) -> model_pb2.ModelProto:
    model = model_pb2.ModelProto()
    model.ParseFromString(proto)
    return model


def _user_score(piece: str) -> np.float32:
    return _f32(0.1 * (len(piece.encode("utf-8")) - 1))


class _Analysis:
    """What the exact path needs to know about a model, or why it cannot handle it (`reason`)."""

    def __init__(self, model: model_pb2.ModelProto):
        self.reason = None
        pieces = list(model.pieces)
        normal = [p for p in pieces if p.type == NORMAL]
        trie = [(i, p) for i, p in enumerate(pieces) if p.type in (NORMAL, USER_DEFINED)]
        unknown = [i for i, p in enumerate(pieces) if p.type == UNKNOWN]
        if model.trainer_spec.model_type != UNIGRAM:
            self.reason = "not a unigram model"
            return
        if model.trainer_spec.byte_fallback:
            self.reason = "byte fallback is not supported by the exact unigram path"
            return
        if not normal or len(unknown) != 1:
            self.reason = "the model needs normal pieces and exactly one unknown piece"
            return
        self.unk_id = unknown[0]
        self.unk_score = _f32(min(_f32(p.score) for p in normal) - UNK_PENALTY)
        self.trie = trie
        self.chars = {c for _, p in trie for c in p.piece}
        singles = {p.piece for _, p in trie if len(p.piece) == 1}
        inner = sorted(self.chars - singles)
        if any(len(c.encode("utf-8")) > 1 for c in inner):
            wide = [c for c in inner if len(c.encode("utf-8")) > 1]
            self.reason = f"characters {wide[:5]} occur in pieces but are not pieces themselves"
            return
        spare = [chr(c) for c in list(range(1, 32)) + [127] if chr(c) not in self.chars]
        if not spare:
            self.reason = "no ASCII control character is free for the unknown-character placeholder"
            return
        self.placeholder = spare[0]
        # The converted model's extra pieces, from id `vocab_size` on: the placeholder, the ASCII
        # characters that only occur inside longer pieces (both scoring like an unknown edge), then
        # the value prefix's pieces "-2^e" and "+2^e".
        self.vocab_size = len(pieces)
        self.unknown_chars = [self.placeholder] + inner
        size = self.vocab_size + len(self.unknown_chars)
        self.scores = np.zeros(size, np.float32)
        self.piece_bytes = np.ones(size, np.int32)
        for i, p in trie:
            self.scores[i] = _user_score(p.piece) if p.type == USER_DEFINED else _f32(p.score)
            self.piece_bytes[i] = len(p.piece.encode("utf-8"))
        self.scores[self.vocab_size :] = self.unk_score
        self.max_bytes = int(self.piece_bytes.max())
        self.max_chars = max(len(p.piece) for _, p in trie)
        positive = [self.scores[i] / max(1, len(p.piece)) for i, p in trie if self.scores[i] > 0]
        # |best[x]| <= (characters up to x) * per_char, whatever the path.
        self.per_char = float(max([abs(self.unk_score)] + positive))
        self.neg_exps = list(range(-149, _UNIT_EXP + 1))
        self.pos_exps = list(range(-149, 31))
        free = (chr(c) for c in range(0xE000, 0xF900) if chr(c) not in self.chars)
        self.neg_chars = [next(free) for _ in self.neg_exps]
        self.pos_chars = [next(free) for _ in self.pos_exps]


def unsupported_reason(model: model_pb2.ModelProto) -> str | None:
    """None when `ExactUnigram` reproduces sentencepiece for this model, else why not."""
    return _Analysis(model).reason


def _helper_model(model: model_pb2.ModelProto, kind: str) -> tuple[bytes, list[str]]:
    """A copy of `model` with the same normalizer whose vocabulary is the unknown piece, one normal
    piece (`▁` for kind "words", else one that never matters), the USER_DEFINED pieces (the
    normalizer leaves them alone) and, for kind "bytes", the 256 byte pieces with byte fallback. Each
    row comes back as its normalized text: one unknown piece ("row"), runs between `▁`s ("words"),
    or one piece per normalized byte, with offsets ("bytes"). Also returns each piece's text."""
    byte_pieces = kind == "bytes"
    helper = model_pb2.ModelProto()
    helper.CopyFrom(model)
    del helper.pieces[:]
    unk = helper.pieces.add()
    unk.piece, unk.type, unk.score = "<unk>", UNKNOWN, 0.0
    if byte_pieces:
        for value in range(256):
            piece = helper.pieces.add()
            piece.piece, piece.type, piece.score = f"<0x{value:02X}>", BYTE, 0.0
    user = [p for p in model.pieces if p.type == USER_DEFINED]
    never = helper.pieces.add()
    never.piece = SPACE if kind == "words" and SPACE not in {p.piece for p in user} else _NEVER
    never.type, never.score = NORMAL, -1.0
    for p in user:
        helper.pieces.add().CopyFrom(p)
    spec = helper.trainer_spec
    spec.model_type = UNIGRAM
    spec.vocab_size = len(helper.pieces)
    spec.unk_id, spec.bos_id, spec.eos_id, spec.pad_id = 0, -1, -1, -1
    spec.byte_fallback = byte_pieces
    texts = [chr(int(p.piece[3:5], 16)) if p.type == BYTE else p.piece for p in helper.pieces]
    return helper.SerializeToString(), texts


def _converted_model(model: model_pb2.ModelProto, analysis: _Analysis) -> bytes:
    """The model for `FastSentencepieceTokenize`: identity normalizer, sentencepiece's USER_DEFINED
    scores, UNUSED pieces out of the trie, plus the unknown-character and value-prefix pieces."""
    fast = model_pb2.ModelProto()
    fast.CopyFrom(model)
    spec = fast.normalizer_spec
    spec.name = "identity"
    spec.precompiled_charsmap = b"\0\0\0\0"  # an empty character map
    spec.add_dummy_prefix = False
    spec.remove_extra_whitespaces = False
    spec.escape_whitespaces = False
    for p in fast.pieces:
        if p.type in (UNUSED, BYTE):
            p.type = CONTROL
        elif p.type == USER_DEFINED:
            p.score = float(_user_score(p.piece))
    extra = [(c, float(analysis.unk_score)) for c in analysis.unknown_chars]
    extra += [(c, -(2.0**e)) for c, e in zip(analysis.neg_chars, analysis.neg_exps)]
    extra += [(c, 2.0**e) for c, e in zip(analysis.pos_chars, analysis.pos_exps)]
    for char, score in extra:
        piece = fast.pieces.add()
        piece.piece, piece.type, piece.score = char, NORMAL, score
    fast.trainer_spec.unk_id = analysis.unk_id
    fast.trainer_spec.vocab_size = len(fast.pieces)
    return pywrap_model_converter.convert_sentencepiece_model(fast.SerializeToString())


class ExactUnigram(tf.Module):
    """`ids(prepared)` and `ids_with_offsets(prepared, model_resource)` for a supported unigram model
    (`prepared`: 1-D, valid UTF-8); `resource_factory(proto)` makes a TF-Text SentencePiece resource.

    Internally, "raw" ids are the converted model's: ids from `vocab_size` on stand for unknown
    characters (one piece each) until `finish` maps them to the unknown id and merges runs."""

    def __init__(self, model: model_pb2.ModelProto, resource_factory):
        super().__init__(name="exact_unigram")
        a = _Analysis(model)
        if a.reason:
            raise ValueError(a.reason)
        self._a = a
        self._ascii = AsciiNormalizer.for_model(model.SerializeToString())
        self._row_normalizer = resource_factory(_helper_model(model, "row")[0])
        self._word_normalizer = resource_factory(_helper_model(model, "words")[0])
        byte_proto, byte_texts = _helper_model(model, "bytes")
        self._byte_model = resource_factory(byte_proto)
        # Byte pieces' texts as raw single bytes (latin-1), the others as UTF-8.
        self._byte_texts = tf.constant(
            [t.encode("latin-1") if i in range(1, 257) else t.encode("utf-8") for i, t in enumerate(byte_texts)]
        )
        self._converted = tf.constant(np.frombuffer(_converted_model(model, a), np.uint8))
        known = "".join(f"\\x{{{ord(c):x}}}" for c in sorted(a.chars))
        self._unknown_class = f"[^{known}]"
        self._known_run = f"[{known}]+"
        # A known character (never inside a run of unknown ones) that a regex rewrite copies verbatim.
        self._separator = SPACE if SPACE in a.chars else min(a.chars - {"\\"})
        self._scores = tf.constant(a.scores)
        self._piece_bytes = tf.constant(a.piece_bytes)
        keys = [p.piece for _, p in a.trie] + a.unknown_chars
        values = [i for i, _ in a.trie] + list(range(a.vocab_size, a.vocab_size + len(a.unknown_chars)))
        self._trie = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(keys, values, tf.string, tf.int32), default_value=-1
        )
        self._neg_chars = tf.constant(a.neg_chars)
        self._pos_chars = tf.constant(a.pos_chars)
        pairs = [(d, length) for d in range(1, a.max_bytes) for length in range(d + 1, a.max_bytes + 1)]
        self._span_pairs = tf.constant(pairs if pairs else np.zeros([0, 2]), tf.int32, shape=[len(pairs), 2])

    # ---------------------------------------------------------------- public

    @tf.autograph.experimental.do_not_convert
    def ids(self, prepared: tf.Tensor) -> tf.RaggedTensor:
        """Ids of 1-D prepared (lower-cased, valid UTF-8) strings, as sentencepiece 0.2.x gives them."""
        return self._finish(self._segment(self._dp_input(self._normalize(prepared))))[0]

    @tf.autograph.experimental.do_not_convert
    def ids_with_offsets(self, prepared: tf.Tensor, model_resource):
        """(ids, starts, ends) of 1-D prepared strings: sentencepiece's ids and its byte offsets
        (norm_to_orig at each piece's normalized begin and end).

        TF-Text's SentencePiece op with the model itself (`model_resource`) gives the offsets at its
        own piece boundaries, which are this segmentation's except where a tie went the other way;
        rows with a boundary it lacks, and rows too long for it (see `_LONG_BYTES`), take the byte
        helper model's offsets, one per normalized byte."""
        long_rows = tf.strings.length(prepared) > _LONG_BYTES
        short = tf.cast(tf.where(~long_rows)[:, 0], tf.int32)
        long = tf.cast(tf.where(long_rows)[:, 0], tf.int32)
        pieces, splits, p_starts, p_ends = gen_sentencepiece_tokenizer.sentencepiece_tokenize_with_offsets_op(
            model_resource, tf.gather(prepared, short), 0, 1.0, False, False, False, tf.string, Tsplits=tf.int64,
            return_nbest=False,
        )
        long_ids, long_splits, long_starts, long_ends = self._normalized_bytes(tf.gather(prepared, long))
        long_texts = tf.RaggedTensor.from_row_splits(tf.gather(self._byte_texts, long_ids), long_splits, validate=False)
        normalized = tf.dynamic_stitch(
            [short, long],
            [
                tf.strings.reduce_join(tf.RaggedTensor.from_row_splits(pieces, splits, validate=False), axis=1),
                tf.strings.reduce_join(long_texts, axis=1),
            ],
        )
        normalized = tf.reshape(normalized, [-1])
        raw = self._segment(self._dp_input(normalized))

        # Normalized byte length of each raw piece: its own, 1 for an ASCII unknown, and for the first
        # placeholder of a run of characters in no piece, the run's (the others 0; runs get merged).
        flat = raw.flat_values
        placeholder = tf.equal(flat, self._a.vocab_size)
        row_start = tf.equal(tf.range(tf.size(flat, out_type=tf.int64)), tf.gather(raw.row_splits, raw.value_rowids()))
        after_placeholder = tf.concat([[False], placeholder[:-1]], 0) & ~row_start
        run_start = placeholder & ~after_placeholder
        runs = tf.strings.split(tf.strings.regex_replace(normalized, self._known_run, self._separator), self._separator)
        run_bytes = tf.strings.length(tf.boolean_mask(runs.flat_values, tf.strings.length(runs.flat_values) > 0))
        run_bytes = tf.concat([run_bytes, [0]], 0)  # never gathered from an empty tensor
        run_rank = tf.minimum(tf.maximum(tf.cumsum(tf.cast(run_start, tf.int32)) - 1, 0), tf.size(run_bytes) - 1)
        length = tf.where(run_start, tf.gather(run_bytes, run_rank), tf.gather(self._piece_bytes, flat))
        length = tf.where(placeholder & ~run_start, 0, length)
        ids, group = self._finish(raw)
        length = tf.math.segment_sum(tf.cast(length, tf.int64), group)

        # Keys: row r's normalized position p is base(r) + r + p, so rows never share a key.
        text_bytes = tf.cast(tf.strings.length(normalized), tf.int64)
        row_key = tf.cumsum(text_bytes + 1, exclusive=True)
        piece_row = ids.value_rowids()
        end_key = (
            tf.gather(row_key, piece_row) + tf.cumsum(length) - tf.gather(tf.cumsum(text_bytes, exclusive=True), piece_row)
        )
        start_key = end_key - length

        def boundary_map(rows_index, piece_lengths, splits, starts, ends):
            """(keys, offsets) for rows `rows_index`: the offset at each piece start and at each row's end."""
            piece_lengths = tf.cast(piece_lengths, tf.int64)
            local_row = tf.ragged.row_splits_to_segment_ids(splits)
            total = tf.cumsum(piece_lengths)
            before_row = tf.gather(tf.concat([[0], total], 0), splits[:-1])
            row_keys = tf.gather(row_key, rows_index)
            start_keys = tf.gather(row_keys, local_row) + total - piece_lengths - tf.gather(before_row, local_row)
            nonempty = splits[1:] > splits[:-1]
            end_keys = tf.boolean_mask(row_keys + tf.gather(text_bytes, rows_index), nonempty)
            ends = tf.concat([tf.cast(ends, tf.int64), [0]], 0)  # never gathered from an empty tensor
            last_end = tf.boolean_mask(tf.gather(ends, tf.maximum(splits[1:] - 1, 0)), nonempty)
            return tf.concat([start_keys, end_keys], 0), tf.concat([tf.cast(starts, tf.int64), last_end], 0)

        byte_lengths = tf.strings.length(self._byte_texts)
        short_map = boundary_map(short, tf.strings.length(pieces), splits, p_starts, p_ends)
        long_map = boundary_map(long, tf.gather(byte_lengths, long_ids), long_splits, long_starts, long_ends)
        keys = tf.concat([short_map[0], long_map[0]], 0)
        values = tf.concat([short_map[1], long_map[1]], 0)
        key_space = tf.reduce_sum(text_bytes + 1)

        def find(keys, values, wanted):
            """(found, offset) of each wanted key, through a dense array over all keys."""
            known = tf.scatter_nd(keys[:, None], tf.ones_like(keys, tf.int32), [key_space]) > 0
            dense = tf.scatter_nd(keys[:, None], values, [key_space])
            return tf.gather(known, wanted), tf.gather(dense, wanted)

        wanted = tf.concat([start_key, end_key], 0)
        found, offsets = find(keys, values, wanted)

        def refine():
            # Rows with a boundary TF-Text's segmentation lacks: offsets per normalized byte.
            missing = tf.sort(tf.unique(tf.boolean_mask(tf.concat([piece_row, piece_row], 0), ~found))[0])
            missing = tf.cast(missing, tf.int32)
            b_ids, b_splits, b_starts, b_ends = self._normalized_bytes(tf.gather(prepared, missing))
            fine = boundary_map(missing, tf.gather(byte_lengths, b_ids), b_splits, b_starts, b_ends)
            return tf.where(found, offsets, find(fine[0], fine[1], wanted)[1])

        offsets = tf.cond(tf.reduce_all(found), lambda: offsets, refine)
        count = tf.size(ids.flat_values)
        return ids, ids.with_flat_values(offsets[:count]), ids.with_flat_values(offsets[count:])

    # ---------------------------------------------------------------- normalization

    def _normalize(self, prepared: tf.Tensor) -> tf.Tensor:
        """sentencepiece's normalized text of each string (1-D in, 1-D out)."""
        size = tf.strings.length(prepared)
        kind = tf.cast(size > _SHORT_BYTES, tf.int32) + tf.cast(size > _LONG_BYTES, tf.int32)
        normalizers = [
            lambda texts: self._normalize_with(self._row_normalizer, texts),
            lambda texts: self._normalize_with(self._word_normalizer, texts),
            self._normalize_bytes,
        ]
        if self._ascii is not None:  # printable-ASCII rows skip the op (kind 3)
            kind = tf.where(tf.strings.regex_full_match(prepared, PRINTABLE_ASCII), 3, kind)
            normalizers.append(self._ascii.normalize)

        def mixed():
            index = tf.dynamic_partition(tf.range(tf.size(prepared)), kind, len(normalizers))
            texts = tf.dynamic_partition(prepared, kind, len(normalizers))
            normalized = tf.dynamic_stitch(index, [normalize(part) for normalize, part in zip(normalizers, texts)])
            return tf.reshape(normalized, [-1])

        def single_kind(number):
            return lambda: tf.cond(tf.reduce_all(tf.equal(kind, number)), lambda: normalizers[number](prepared), mixed)

        if self._ascii is None:
            return single_kind(0)()
        return tf.cond(tf.reduce_all(tf.equal(kind, 3)), lambda: self._ascii.normalize(prepared), single_kind(0))

    @staticmethod
    def _normalize_with(resource, prepared):
        pieces, splits = gen_sentencepiece_tokenizer.sentencepiece_tokenize_op(
            resource.resource_handle, prepared, 0, 1.0, False, False, False, tf.string, Tsplits=tf.int64,
            return_nbest=False,
        )
        return tf.strings.reduce_join(tf.RaggedTensor.from_row_splits(pieces, splits, validate=False), axis=1)

    def _normalized_bytes(self, prepared):
        """(ids, splits, starts, ends) of the byte helper model: one piece per normalized byte (byte b
        is id b + 1), starts/ends sentencepiece's offsets in `prepared`."""
        return gen_sentencepiece_tokenizer.sentencepiece_tokenize_with_offsets_op(
            self._byte_model.resource_handle, prepared, 0, 1.0, False, False, False, tf.int32, Tsplits=tf.int64,
            return_nbest=False,
        )

    def _normalize_bytes(self, prepared):
        ids, splits, _, _ = self._normalized_bytes(prepared)
        texts = tf.RaggedTensor.from_row_splits(tf.gather(self._byte_texts, ids), splits, validate=False)
        return tf.strings.reduce_join(texts, axis=1)

    def _dp_input(self, normalized: tf.Tensor) -> tf.Tensor:
        """Characters that occur in no piece become the one-byte placeholder."""
        return tf.strings.regex_replace(normalized, self._unknown_class, self._a.placeholder)

    # ---------------------------------------------------------------- segmentation

    def _fast(self, text: tf.Tensor):
        values, splits = gen_fast_sentencepiece_tokenizer.tf_text_fast_sentencepiece_tokenize(
            self._converted, text, 0, 0, False, False, False
        )
        return values, splits

    def _finish(self, raw: tf.RaggedTensor):
        """(ids, group): unknown-character pieces become the unknown id, runs of them one piece;
        `group` maps each raw piece to its output piece."""
        flat = raw.flat_values
        unknown = flat >= self._a.vocab_size
        starts = raw.row_splits[:-1]
        row_start = tf.scatter_nd(starts[:, None], tf.ones_like(starts, tf.int32), [tf.size(flat, out_type=tf.int64) + 1])
        keep = ~(unknown & tf.concat([[False], unknown[:-1]], 0) & tf.equal(row_start[:-1], 0))
        position = tf.cumsum(tf.cast(keep, tf.int64))
        splits = tf.gather(tf.concat([[0], position], 0), raw.row_splits)
        values = tf.boolean_mask(tf.where(unknown, self._a.unk_id, flat), keep)
        return tf.RaggedTensor.from_row_splits(values, splits, validate=False), position - 1

    def _segment(self, dp: tf.Tensor) -> tf.RaggedTensor:
        """Raw ids of the dp input, rows that can reach the score reset emulated."""
        values, splits = self._fast(dp)
        raw = tf.RaggedTensor.from_row_splits(values, tf.cast(splits, tf.int64), validate=False)
        chars = tf.cast(tf.strings.length(dp, unit="UTF8_CHAR"), tf.float32)
        bound = (chars + self._a.max_chars + 1) * self._a.per_char * _SLACK
        long_rows = tf.cast(tf.where(bound >= RESET)[:, 0], tf.int32)
        return tf.cond(tf.size(long_rows) > 0, lambda: self._replace_long_rows(dp, raw, long_rows), lambda: raw)

    def _replace_long_rows(self, dp, raw, long_rows):
        values, sizes = self._exact_rows(tf.gather(dp, long_rows))
        replacement = tf.RaggedTensor.from_row_lengths(values, sizes, validate=False)
        rows = tf.shape(raw.row_splits, out_type=tf.int32)[0] - 1
        index = tf.tensor_scatter_nd_update(tf.range(rows), long_rows[:, None], rows + tf.range(tf.size(long_rows)))
        return tf.gather(tf.concat([raw, replacement], axis=0), index)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def _exact_rows(self, texts):
        """`_exact_row` of each text: (raw ids of all rows, concatenated; each row's length). One
        traced function, however many graphs call it."""
        count = tf.size(texts)
        parts = tf.TensorArray(tf.int32, size=count, infer_shape=False, element_shape=[None])
        sizes = tf.TensorArray(tf.int64, size=count, element_shape=[])

        def body(k, parts, sizes):
            row = self._exact_row(texts[k])
            return k + 1, parts.write(k, row), sizes.write(k, tf.size(row, out_type=tf.int64))

        _, parts, sizes = tf.while_loop(lambda k, *_: k < count, body, [0, parts, sizes])
        return parts.concat(), sizes.stack()

    # ---------------------------------------------------------------- one long row, with the score reset

    def _prefix(self, value):
        """Characters whose pieces, in order, sum to `value` exactly in float32 (and their count): the
        bits of its mantissa from the highest, negative ones above 2^_UNIT_EXP as repeated units."""
        bits = tf.bitcast(value, tf.int32)
        exponent_field = tf.bitwise.bitwise_and(tf.bitwise.right_shift(bits, 23), 0xFF)
        mantissa = tf.bitwise.bitwise_and(bits, 0x7FFFFF)
        mantissa = tf.where(exponent_field > 0, tf.bitwise.bitwise_or(mantissa, 0x800000), mantissa)
        low = tf.where(exponent_field > 0, exponent_field - 150, -149)  # |value| = mantissa * 2^low
        positions = tf.range(23, -1, -1)
        exps = low + positions
        set_bits = tf.equal(tf.bitwise.bitwise_and(tf.bitwise.right_shift(mantissa, positions), 1), 1)
        negative = value < 0
        big = set_bits & (exps >= _UNIT_EXP) & negative
        units = tf.reduce_sum(tf.where(big, tf.bitwise.left_shift(1, tf.maximum(exps - _UNIT_EXP, 0)), 0))
        small = set_bits & ~big
        index = tf.where(negative, exps - self._a.neg_exps[0], exps - self._a.pos_exps[0])
        table = tf.cond(negative, lambda: self._neg_chars, lambda: self._pos_chars)
        unit_char = self._neg_chars[_UNIT_EXP - self._a.neg_exps[0]]
        chars = tf.concat([tf.fill([units], unit_char), tf.gather(table, tf.boolean_mask(index, small))], 0)
        return tf.strings.reduce_join(chars), tf.size(chars)

    def _clean(self, text, n, candidates):
        """Whether no piece occurrence spans each candidate position."""
        d = self._span_pairs[:, 0]
        length = self._span_pairs[:, 1]
        starts = candidates[:, None] - d[None, :]
        ok = (starts >= 0) & (starts + length[None, :] <= n)
        safe_starts = tf.clip_by_value(starts, 0, n)
        found = self._trie.lookup(tf.strings.substr(text, safe_starts, tf.where(ok, length[None, :], 0))) >= 0
        return ~tf.reduce_any(found & ok, axis=1)

    def _chunk_end(self, text, data, n, at):
        """The first clean character boundary at or after `at` (within a window), else the row's end."""

        def search():
            window = tf.range(at, tf.minimum(at + _CLEAN_WINDOW, n))
            starts = tf.boolean_mask(window, tf.not_equal(tf.bitwise.bitwise_and(tf.gather(data, window), 0xC0), 0x80))
            clean = self._clean(text, n, starts)
            return tf.reduce_min(tf.concat([tf.boolean_mask(starts, clean), [n]], 0))

        return tf.cond(at < n, search, lambda: n)

    def _exact_row(self, text):
        """Raw ids of one row (dp input), emulating the score reset; see the module docstring."""
        data = tf.cast(tf.io.decode_raw(text, tf.uint8), tf.int32)
        n = tf.size(data)
        margin = (self._a.max_chars + 1) * self._a.per_char + 1.0
        parts = tf.TensorArray(tf.int32, size=0, dynamic_size=True, infer_shape=False, element_shape=[None])

        def frame(c, v, span, parts, k):
            # The kernel on a chunk ending at a clean position, started from the value v at c.
            end = self._chunk_end(text, data, n, c + span)
            prefix, count = self._prefix(v)
            values, _ = self._fast(tf.reshape(prefix + tf.strings.substr(text, c, end - c), [1]))
            ids = values[count:]
            piece_end = c + tf.cumsum(tf.gather(self._piece_bytes, ids))
            chain = tf.cumsum(tf.concat([[v], tf.gather(self._scores, ids)], 0))  # float32, left to right
            danger = tf.abs(chain) + margin >= RESET
            first = tf.cast(tf.argmax(tf.cast(danger, tf.int32)), tf.int32)
            boundary = tf.concat([[c], piece_end], 0)

            def reset():
                # Up to the first boundary whose score could pass the threshold the kernel's path is
                # sentencepiece's; restart at the last clean boundary before it and emulate.
                danger_at = boundary[first]
                candidates = tf.boolean_mask(boundary, (boundary <= danger_at) & (boundary >= danger_at - _CLEAN_WINDOW))
                clean = self._clean(text, n, candidates) | tf.equal(candidates, c)
                restart = tf.reduce_max(tf.concat([[c], tf.boolean_mask(candidates, clean)], 0))
                accepted = tf.reduce_sum(tf.cast(piece_end <= restart, tf.int32))
                emulated, w, value = self._emulate(text, data, n, restart, chain[accepted])
                next_span = tf.cast(tf.cast(danger_at - c, tf.float32) * 1.25, tf.int32) + 4096
                return accepted, emulated, w, value, next_span

            def no_reset():
                return tf.size(ids), tf.zeros([0], tf.int32), end, chain[-1], span

            accepted, emulated, w, value, span = tf.cond(tf.reduce_any(danger), reset, no_reset)
            parts = parts.write(k, ids[:accepted]).write(k + 1, emulated)
            return w, value, span, parts, k + 2

        _, _, _, parts, _ = tf.while_loop(
            lambda c, *_: c < n, frame, [0, tf.constant(0.0), _FIRST_CHUNK, parts, 0], parallel_iterations=1
        )
        return parts.concat()

    def _emulate(self, text, data, n, start, value):
        """sentencepiece's recurrence from the clean position `start` (best = `value`), until a reset has
        happened and the lattice is clean again (or the row ends): (raw ids, end position, best there).
        The window holds best[s .. s + width - 1] for the current character start s."""
        a = self._a
        width = max(a.max_bytes, 4) + 1
        lengths = tf.range(1, width)
        slots = tf.range(width)
        init_val = tf.concat([[value], tf.zeros([width - 1], tf.float32)], 0)
        init_set = tf.concat([[True], tf.zeros([width - 1], tf.bool)], 0)
        init_from = tf.fill([width], -1)
        records = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[3])

        def cond(s, val, is_set, came_from, piece, reset_seen, records, r):
            clean = ~tf.reduce_any(is_set[1:])
            return (s < n) & ~(reset_seen & clean)

        def body(s, val, is_set, came_from, piece, reset_seen, records, r):
            lead = data[s]
            mb = tf.minimum(tf.where(lead < 0xC0, 1, tf.where(lead < 0xE0, 2, tf.where(lead < 0xF0, 3, 4))), n - s)
            offset = val[0]
            reset = tf.abs(offset) > RESET
            val = tf.where(reset & (is_set | tf.equal(slots, 0)), val - offset, val)
            base = val[0]
            fits = s + lengths <= n
            subs = tf.strings.substr(text, tf.fill([width - 1], s), tf.where(fits, lengths, 0))
            ids = tf.concat([[-1], tf.where(fits, self._trie.lookup(subs), -1)], 0)
            cand = tf.gather(self._scores, tf.maximum(ids, 0)) + base
            update = (ids >= 0) & (~is_set | (cand > val))
            # Every character of the dp input has a one-character piece, so this never fires; kept as
            # sentencepiece has it.
            unk_cand = a.unk_score + base
            unk_update = tf.equal(slots, mb) & (ids[mb] < 0) & (~is_set | (unk_cand > val))
            val = tf.where(update, cand, tf.where(unk_update, unk_cand, val))
            came_from = tf.where(update | unk_update, s, came_from)
            piece = tf.where(update, ids, tf.where(unk_update, a.vocab_size, piece))
            is_set = is_set | update | unk_update
            records = records.write(r, tf.stack([s + mb, came_from[mb], piece[mb]]))
            val = tf.reshape(tf.concat([val[mb:], tf.zeros([mb], tf.float32)], 0), [width])
            is_set = tf.reshape(tf.concat([is_set[mb:], tf.zeros([mb], tf.bool)], 0), [width])
            came_from = tf.reshape(tf.concat([came_from[mb:], tf.fill([mb], -1)], 0), [width])
            piece = tf.reshape(tf.concat([piece[mb:], tf.fill([mb], -1)], 0), [width])
            return s + mb, val, is_set, came_from, piece, reset_seen | reset, records, r + 1

        end, val, _, _, _, _, records, _ = tf.while_loop(
            cond,
            body,
            [start, init_val, init_set, init_from, init_from, tf.constant(False), records, 0],
            parallel_iterations=1,
        )
        table = tf.reshape(records.stack(), [-1, 3])
        size = end - start + 1
        local = table[:, 0] - start
        came = tf.scatter_nd(local[:, None], table[:, 1] - start, [size])
        pieces = tf.scatter_nd(local[:, None], table[:, 2], [size])
        out = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[])

        def back(pos, out, k):
            return came[pos], out.write(k, pieces[pos]), k + 1

        _, out, _ = tf.while_loop(lambda pos, out, k: pos > 0, back, [end - start, out, 0], parallel_iterations=1)
        return tf.reverse(tf.reshape(out.stack(), [-1]), [0]), end, val[0]
