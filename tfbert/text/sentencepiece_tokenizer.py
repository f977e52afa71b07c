"""SentencePiece tokenization (ALBERT, XLM-R) through TF-Text's SentencePiece op."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Mapping

import sentencepiece
import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.python.ops.sentencepiece_tokenizer import gen_sentencepiece_tokenizer

from tfbert.artifacts.layout import TOKENIZER_CONFIG_FILE as CONFIG_FILE
from tfbert.text import _unigram
from tfbert.text._files import PathLike, existing_file
from tfbert.text.base import Tokenizer, as_utf8, lower_utf8, roles_in_config

MODEL_FILE = "spiece.model"



class _SharedSentencepieceModel(tf.saved_model.experimental.TrackableResource):
    """The SentencePiece model resource, registered under a name derived from the model's bytes.

    TF-Text creates it without a name, which makes it private to the op's
    kernel: `tf.random.set_seed` (and `keras.utils.set_random_seed`) clears the
    eager kernel cache, deletes the resource, and every dataset using the
    tokenizer then fails with "Resource .../_0_SentencepieceOp/... does not
    exist". A shared name keeps it in the resource manager; identical models
    may share it, different ones never collide.
    """

    def __init__(self, proto: bytes):
        super().__init__()
        self._proto = proto
        self._shared_name = "tfbert_sentencepiece_" + hashlib.sha256(proto).hexdigest()[:24]
        _ = self.resource_handle

    def _create_resource(self):
        return gen_sentencepiece_tokenizer.sentencepiece_op(model=self._proto, shared_name=self._shared_name)


# Preferred token string for each role, first one present in the model wins.
_ROLE_CANDIDATES = {
    "cls": ("[CLS]", "<s>"),
    "sep": ("[SEP]", "</s>"),
    "pad": ("<pad>", "[PAD]"),
    "mask": ("[MASK]", "<mask>"),
    "unk": ("<unk>", "[UNK]"),
    "bos": ("<s>",),
    "eos": ("</s>",),
}


def _load_model(model_file: PathLike | bytes) -> tuple[bytes, sentencepiece.SentencePieceProcessor]:
    if isinstance(model_file, bytes):
        proto, source = model_file, "SentencePiece model bytes"
    else:
        proto, source = existing_file(model_file, "SentencePiece model").read_bytes(), f"SentencePiece model file {model_file}"
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(proto)
    except (RuntimeError, OSError) as error:
        raise ValueError(f"{source} is not a valid SentencePiece model: {error}") from None
    if processor.GetPieceSize() == 0:
        raise ValueError(f"{source} has no pieces")
    return proto, processor



def _per_string(fn, strings: tf.Tensor):
    """Applies `fn` (1-D strings -> RaggedTensor or tuple of them, one row per string) to a string
    tensor of any rank, shaped as TF-Text's tokenizers shape their output."""
    rank = strings.shape.rank
    if rank is None:
        raise ValueError("the rank of the input strings must be statically known")
    if rank == 1:
        return fn(strings)
    if rank == 0:
        out = fn(tf.reshape(strings, [1]))
        return tuple(t.values for t in out) if isinstance(out, tuple) else out.values
    dense_shape = tf.shape(strings, out_type=tf.int64)
    out = fn(tf.reshape(strings, [-1]))

    def reshape(ragged):
        for size in reversed([dense_shape[i] for i in range(1, rank)]):
            ragged = tf.RaggedTensor.from_uniform_row_length(ragged, size, validate=False)
        return ragged

    return tuple(reshape(t) for t in out) if isinstance(out, tuple) else reshape(out)


class SentencePieceTokenizer(Tokenizer):
    """SentencePiece model (BPE or unigram) as a `tf.Module`; the model proto is a graph constant.

    `lowercase=True` lowercases the input first, as ALBERT does; `strip_accents=True` first decomposes
    it (NFKD) and drops the accents (`Mn`), as Hugging Face's `AlbertTokenizer` without `keep_accents`
    (which also turns Hangul syllables into jamo). Special tokens are looked up in the
    model: `[CLS]`/`[SEP]`/`[MASK]` when present (ALBERT), else `<s>`/`</s>`/`<mask>` (XLM-R style);
    pass `special_tokens={"mask": "<mask>", ...}` to choose others, or None to drop a role.

    Unigram models are segmented as `sentencepiece` 0.2.x segments them, ids and offsets (`exact=True`,
    see `tfbert/text/_unigram.py`); `exact=False` keeps TF-Text's bundled SentencePiece alone (about
    1.2x faster `tokenize`, 2.3x faster `tokenize_with_offsets`), whose Viterbi breaks ties between
    equal-scoring segmentations differently (a few lines in a thousand, e.g. `.......`) and which
    lacks sentencepiece's score reset on very long rows. BPE models are exact either way.

    Example:
        >>> tokenizer = SentencePieceTokenizer("botchan_en_unigram_1000.model")
        >>> ids = tokenizer.tokenize(["I am a cat."])
        >>> tokenizer.detokenize(ids)
        <tf.Tensor: ... numpy=array([b'I am a cat.'], dtype=object)>
    """

    def __init__(
        self,
        model_file: PathLike | bytes,
        lowercase: bool = False,
        special_tokens: Mapping[str, str | None] | None = None,
        name: str | None = None,
        exact: bool = True,
        strip_accents: bool = False,
    ):
        self._proto, processor = _load_model(model_file)
        tokens = [processor.IdToPiece(index) for index in range(processor.GetPieceSize())]
        present = set(tokens)
        specials = {role: next((t for t in candidates if t in present), None) for role, candidates in _ROLE_CANDIDATES.items()}
        specials["unk"] = tokens[processor.unk_id()]
        specials.update(special_tokens or {})
        super().__init__(tokens, specials, name=name)
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        self._sentencepiece = tf_text.SentencepieceTokenizer(model=self._proto, out_type=tf.int32)
        self._sentencepiece._model_resource = _SharedSentencepieceModel(self._proto)
        self.exact = exact
        self._exact = None
        model = _unigram.parse(self._proto)
        if exact and model.trainer_spec.model_type == _unigram.UNIGRAM:
            reason = _unigram.unsupported_reason(model)
            if reason:
                warnings.warn(
                    f"SentencePieceTokenizer: {reason}; segmenting with TF-Text's SentencePiece, which may "
                    "break ties between equal-scoring segmentations differently from sentencepiece",
                    stacklevel=2,
                )
            else:
                self._exact = _unigram.ExactUnigram(model, _SharedSentencepieceModel)

    def _prepare(self, strings: tf.Tensor) -> tf.Tensor:
        strings = as_utf8(strings)
        if self.strip_accents:
            strings = tf.strings.regex_replace(tf_text.normalize_utf8(strings, "NFKD"), r"\p{Mn}", "")
        return lower_utf8(strings) if self.lowercase else strings

    def tokenize(self, strings) -> tf.RaggedTensor:
        """Ids without BOS/EOS: a RaggedTensor [batch, tokens] of int32 (1-D for a scalar input)."""
        return _per_string(lambda rows: self._in_shards("ids", self._ids, rows), tf.convert_to_tensor(strings, tf.string))

    def tokenize_with_offsets(self, strings):
        """(ids, starts, ends): byte offsets of each piece in the input, sentencepiece's `begin`/`end`
        (in the lowercased text when lowercasing changes byte lengths, which only a few letters such as
        `İ` do)."""
        return _per_string(lambda rows: self._in_shards("ids_with_offsets", self._ids_with_offsets, rows),
                           tf.convert_to_tensor(strings, tf.string))

    def _ids(self, rows: tf.Tensor) -> tf.RaggedTensor:
        prepared = self._prepare(rows)
        if self._exact is None:
            return self._sentencepiece.tokenize(prepared)
        return self._exact.ids(prepared)

    def _ids_with_offsets(self, rows: tf.Tensor):
        prepared = self._prepare(rows)
        if self._exact is None:
            ids, starts, ends = self._sentencepiece.tokenize_with_offsets(prepared)
        else:
            ids, starts, ends = self._exact.ids_with_offsets(prepared, self._sentencepiece._model_resource.resource_handle)
        return ids, tf.cast(starts, tf.int64), tf.cast(ends, tf.int64)

    def model_proto(self) -> bytes:
        """The serialized SentencePiece model (`sentencepiece_model_pb2.ModelProto`)."""
        return self._proto

    def detokenize(self, ids) -> tf.Tensor:
        """Decodes ids to text, as `sentencepiece` decodes them."""
        return self._sentencepiece.detokenize(ids)

    def save_assets(self, directory: PathLike) -> None:
        """Writes spiece.model and tokenizer_config.json, which `from_directory` reads."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / MODEL_FILE).write_bytes(self._proto)
        config = {
            "class": "SentencePieceTokenizer",
            "lowercase": self.lowercase,
            "strip_accents": self.strip_accents,
            "exact": self.exact,
            "special_tokens": self.special_tokens,
        }
        (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")

    @classmethod
    def from_directory(cls, directory: PathLike) -> "SentencePieceTokenizer":
        directory = Path(directory)
        config_path = directory / CONFIG_FILE
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
        return cls(
            directory / MODEL_FILE,
            lowercase=config.get("lowercase", False),
            special_tokens=roles_in_config(config),
            exact=config.get("exact", True),
            strip_accents=config.get("strip_accents", False),
        )
