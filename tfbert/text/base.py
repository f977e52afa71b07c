"""What every tfbert tokenizer shares: vocabulary lookups, special tokens, input cleaning."""

from __future__ import annotations

from typing import Mapping, Sequence

import tensorflow as tf

from tfbert.artifacts.files import MAX_VOCABULARY_SIZE
from tfbert.text._sharding import default_shards, in_shards, shard_function

SPECIAL_ROLES = ("cls", "sep", "pad", "mask", "unk", "bos", "eos")


# Valid UTF-8 in RE2's eyes, minus the surrogates and code points past U+10FFFF that RE2 lets through.
_VALID_UTF8 = r"[\x{0}-\x{D7FF}\x{E000}-\x{10FFFF}]*"


def as_utf8(strings: tf.Tensor) -> tf.Tensor:
    """Replaces invalid UTF-8 byte sequences by U+FFFD so no later op sees broken text.

    Transcoding is several times slower than checking, so batches that are all valid skip it.
    """
    strings = tf.convert_to_tensor(strings, tf.string)
    return tf.cond(
        tf.reduce_all(tf.strings.regex_full_match(strings, _VALID_UTF8)),
        lambda: strings,
        lambda: tf.strings.unicode_transcode(
            strings, input_encoding="UTF-8", output_encoding="UTF-8", errors="replace", replacement_char=0xFFFD
        ),
    )


_HAS_NUL = r"(?s).*\x00.*"


def lower_utf8(strings: tf.Tensor) -> tf.Tensor:
    """`tf.strings.lower(strings, encoding="utf-8")` that keeps NUL characters and the text after them.

    That op hands ICU a C string, so it drops everything from the first NUL on (`"hello\\x00world"` ->
    `"hello"`); strings holding a NUL are lowered between their NULs and joined back, which is the same
    as lowering them whole since NUL is not a cased letter (final sigma included).
    """
    def between_nuls():
        # reduce_join's separator is an attribute, which also stops at a NUL: each part carries its own.
        parts = tf.strings.split(tf.reshape(strings, [-1]), "\x00")
        lowered = tf.strings.join([tf.strings.lower(parts.flat_values, encoding="utf-8"), "\x00"])
        joined = tf.strings.reduce_join(parts.with_flat_values(lowered), axis=-1)
        length = tf.strings.length(joined)
        return tf.reshape(tf.strings.substr(joined, tf.zeros_like(length), tf.maximum(length - 1, 0)),
                          tf.shape(strings))

    return tf.cond(tf.reduce_any(tf.strings.regex_full_match(strings, _HAS_NUL)), between_nuls,
                   lambda: tf.strings.lower(strings, encoding="utf-8"))


def roles_in_config(config: Mapping) -> dict[str, str]:
    """Special-token roles a saved tokenizer_config.json names; roles it leaves empty are detected
    again from the vocabulary (so tokens added later, such as <mask>, are found)."""
    return {role: token for role, token in (config.get("special_tokens") or {}).items() if token is not None}


class Tokenizer(tf.Module):
    """Base class: a `tf.Module` whose vocabulary lives in graph constants, so SavedModels carry it.

    Subclasses set `self._tokens` (list of token strings by id) and `self._special_tokens`
    (role -> token string) and implement `tokenize`, `tokenize_with_offsets` and `detokenize`.
    `shards` is how many slices a batch is cut into so that they run on that many cores side by side
    (one per available core, at most 8; set it to 1 before tracing to keep a batch on one core).
    """

    # tf.Module walks every attribute, element by element, for variables and submodules, and
    # `tf.saved_model.save` asks each module several times; the Python vocabulary (tens of thousands
    # of strings) holds neither, so the walk skips it (a quarter of an export's time otherwise), and
    # the traced shard functions with it.
    _TF_MODULE_IGNORED_PROPERTIES = tf.Module._TF_MODULE_IGNORED_PROPERTIES | {
        "_tokens", "_token_index", "_shard_functions"}

    def __init__(self, tokens: Sequence[str], special_tokens: Mapping[str, str | None], name: str | None = None):
        super().__init__(name=name)
        self.shards = default_shards()
        tokens = list(tokens)
        if len(tokens) > MAX_VOCABULARY_SIZE:   # before any table is built: that would take minutes and gigabytes
            raise ValueError(f"the vocabulary has {len(tokens):,} tokens, more than the {MAX_VOCABULARY_SIZE:,} "
                             "TF-Text's tables hold; use a smaller vocabulary (tfbert vocab --vocab-size N)")
        self._set_untracked(_tokens=tokens, _shard_functions={},
                            _token_index={token: index for index, token in reversed(list(enumerate(tokens)))})
        self._special_tokens = {}
        for role in SPECIAL_ROLES:
            token = special_tokens.get(role)
            if token is not None and token not in self._token_index:
                raise ValueError(f"special token {role}={token!r} is not in the vocabulary")
            self._special_tokens[role] = token
        self._token_strings = tf.constant(self._tokens, dtype=tf.string)
        self._token_ids = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                list(self._token_index), list(self._token_index.values()), tf.string, tf.int32
            ),
            default_value=-1,
        )

    @tf.__internal__.tracking.no_automatic_dependency_tracking
    def _set_untracked(self, **values) -> None:
        """Sets Python-side attributes that no checkpoint or SavedModel carries. A plain assignment would wrap
        a vocabulary's list and dict element by element in trackable containers (most of building a
        30k-token tokenizer)."""
        for name, value in values.items():
            setattr(self, name, value)

    def _in_shards(self, key: str, tokenize, strings: tf.Tensor):
        """`in_shards(tokenize, strings, self.shards)` through one traced function per `key` (`tokenize` must
        then be the same computation on every call), eagerly and in every `tf.function` or `tf.data` trace.

        Eager calls traced anew on each call cost about 0.3 CPU-s, most of an eager call's time; and each
        signature of an export held its own copy of the tokenizer's ops, which a SavedModel then loads and
        TensorFlow optimizes once per copy. A legacy `tf.Graph` (not a function) gets a trace of its own.
        """
        traced = None
        if tf.executing_eagerly() or tf.inside_function():
            traced = self._shard_functions.get(key)
            if traced is None:
                traced = self._shard_functions[key] = shard_function(tokenize)
        return in_shards(tokenize, strings, self.shards, traced)

    def vocabulary(self) -> list[str]:
        """All tokens, index = id."""
        return list(self._tokens)

    def vocabulary_size(self) -> int:
        return len(self._tokens)

    def id_to_token(self, ids) -> tf.Tensor | str:
        """Token strings of int ids (any shape, ragged allowed); a Python int gives a Python str."""
        if isinstance(ids, int):
            return self._tokens[ids]
        if isinstance(ids, tf.RaggedTensor):
            return ids.with_flat_values(tf.gather(self._token_strings, ids.flat_values))
        return tf.gather(self._token_strings, tf.convert_to_tensor(ids))

    def token_to_id(self, tokens):
        """Ids of token strings (-1 when absent); a Python str gives a Python int."""
        if isinstance(tokens, str):
            return self._token_index.get(tokens, -1)
        if isinstance(tokens, tf.RaggedTensor):
            return tokens.with_flat_values(self._token_ids.lookup(tokens.flat_values))
        return self._token_ids.lookup(tf.convert_to_tensor(tokens, tf.string))

    def _special_id(self, role: str) -> int | None:
        token = self._special_tokens.get(role)
        return None if token is None else self._token_index[token]

    @property
    def special_tokens(self) -> dict[str, str | None]:
        """Role (cls, sep, pad, mask, unk, bos, eos) -> token string, None where the scheme has none."""
        return dict(self._special_tokens)

    @property
    def cls_id(self) -> int | None:
        return self._special_id("cls")

    @property
    def sep_id(self) -> int | None:
        return self._special_id("sep")

    @property
    def pad_id(self) -> int | None:
        return self._special_id("pad")

    @property
    def mask_id(self) -> int | None:
        return self._special_id("mask")

    @property
    def unk_id(self) -> int | None:
        return self._special_id("unk")

    @property
    def bos_id(self) -> int | None:
        return self._special_id("bos")

    @property
    def eos_id(self) -> int | None:
        return self._special_id("eos")

    def special_token_ids(self) -> list[int]:
        """Sorted distinct ids of all special tokens this tokenizer defines."""
        return sorted({self._special_id(role) for role in SPECIAL_ROLES if self._special_tokens[role] is not None})

    def __call__(self, strings) -> tf.RaggedTensor:
        return self.tokenize(strings)
