"""sentencepiece's normalization of printable-ASCII text without the normalizer op.

TF-Text's SentencePiece op normalizes at ~4-8 MB per CPU-second, most of the exact unigram path's
time. For text made only of printable ASCII (U+0020-U+007E) the usual normalizers (nmt_nfkc, nfkc,
identity) change no character; what remains is the whitespace handling of the model's
`normalizer_spec` (drop leading and trailing spaces, collapse runs, a dummy `▁` prefix, spaces as
`▁`), three regex passes here. Whether this shortcut gives sentencepiece's output for a model is
checked once, when the model is loaded, against `sentencepiece`'s own normalizer on probe strings
(every printable character, alone and between letters, and spacing cases); if any differs, the
shortcut stays off and every string takes the op.

Example:
    >>> proto = open("botchan_en_unigram_1000.model", "rb").read()
    >>> shortcut = AsciiNormalizer.for_model(proto)   # None when the model's rules differ
    >>> shortcut.normalize(tf.constant(["  Hello   world "]))
    <tf.Tensor: ... numpy=array([b'\\xe2\\x96\\x81Hello\\xe2\\x96\\x81world'], dtype=object)>
"""

from __future__ import annotations

import re

import sentencepiece
import tensorflow as tf
from sentencepiece import sentencepiece_model_pb2 as model_pb2

SPACE = "\u2581"
PRINTABLE_ASCII = r"[ -~]*"
_USER_DEFINED = 4
_PRINTABLE = [chr(code) for code in range(0x20, 0x7F)]
_PROBES = (
    ["", " ", "  ", "a", " a", "a ", "  a  b  ", "a b", "a  b   c", "".join(_PRINTABLE), " ".join(_PRINTABLE)]
    + _PRINTABLE
    + [f"a{char}b" for char in _PRINTABLE]
    + [f" {char}{char} " for char in _PRINTABLE]
)


class AsciiNormalizer:
    """A model's normalization of printable-ASCII strings as regex passes (see the module docstring)."""

    def __init__(self, collapse: bool, dummy_prefix: bool, as_suffix: bool, escape: bool):
        self._collapse = collapse
        self._dummy_prefix = dummy_prefix
        self._as_suffix = as_suffix
        self._space = SPACE if escape else " "

    @classmethod
    def for_model(cls, proto: bytes) -> "AsciiNormalizer | None":
        """The shortcut for this serialized model, or None when it would not match sentencepiece."""
        model = model_pb2.ModelProto()
        model.ParseFromString(proto)
        if any(p.type == _USER_DEFINED and " " in p.piece for p in model.pieces):
            return None
        spec = model.normalizer_spec
        shortcut = cls(spec.remove_extra_whitespaces, spec.add_dummy_prefix, model.trainer_spec.treat_whitespace_as_suffix,
                       spec.escape_whitespaces)
        reference = sentencepiece.SentencePieceNormalizer(model_proto=proto)
        expected = [reference.normalize(text) for text in _PROBES]
        return shortcut if [shortcut.normalize_python(text) for text in _PROBES] == expected else None

    def normalize_python(self, text: str) -> str:
        """The same rules on one Python string (used to check them against sentencepiece)."""
        if self._collapse:
            text = re.sub(" +", " ", text).strip(" ")
        if text and self._dummy_prefix:
            text = text + " " if self._as_suffix else " " + text
        return text.replace(" ", self._space)

    def normalize(self, strings: tf.Tensor) -> tf.Tensor:
        """Normalized text of 1-D printable-ASCII strings."""
        space = self._space
        if self._collapse:
            strings = tf.strings.regex_replace(tf.strings.regex_replace(strings, " +", space), f"^{space}|{space}$", "")
        elif space != " ":
            strings = tf.strings.regex_replace(strings, " ", space)
        if self._dummy_prefix:
            pieces = [strings, space] if self._as_suffix else [space, strings]
            strings = tf.where(tf.strings.length(strings) > 0, tf.strings.join(pieces), strings)
        return strings
