"""SentencePiece tokenization (ALBERT, XLM-R) through TF-Text's SentencePiece op."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

import sentencepiece
import tensorflow as tf
import tensorflow_text as tf_text

from tfbert.text._files import PathLike, existing_file
from tfbert.text.base import Tokenizer, as_utf8, roles_in_config

MODEL_FILE = "spiece.model"
CONFIG_FILE = "tokenizer_config.json"

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



class SentencePieceTokenizer(Tokenizer):
    """SentencePiece model (BPE or unigram) as a `tf.Module`; the model proto is a graph constant.

    `lowercase=True` lowercases the input first, as ALBERT does. Special tokens are looked up in the
    model: `[CLS]`/`[SEP]`/`[MASK]` when present (ALBERT), else `<s>`/`</s>`/`<mask>` (XLM-R style);
    pass `special_tokens={"mask": "<mask>", ...}` to choose others, or None to drop a role.

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
    ):
        self._proto, processor = _load_model(model_file)
        tokens = [processor.IdToPiece(index) for index in range(processor.GetPieceSize())]
        present = set(tokens)
        specials = {role: next((t for t in candidates if t in present), None) for role, candidates in _ROLE_CANDIDATES.items()}
        specials["unk"] = tokens[processor.unk_id()]
        specials.update(special_tokens or {})
        super().__init__(tokens, specials, name=name)
        self.lowercase = lowercase
        self._sentencepiece = tf_text.SentencepieceTokenizer(model=self._proto, out_type=tf.int32)

    def _prepare(self, strings: tf.Tensor) -> tf.Tensor:
        strings = as_utf8(strings)
        return tf.strings.lower(strings, encoding="utf-8") if self.lowercase else strings

    def tokenize(self, strings) -> tf.RaggedTensor:
        """Ids without BOS/EOS: a RaggedTensor [batch, tokens] of int32 (1-D for a scalar input)."""
        return self._sentencepiece.tokenize(self._prepare(tf.convert_to_tensor(strings, tf.string)))

    def tokenize_with_offsets(self, strings):
        """(ids, starts, ends): byte offsets of each piece in the input (in the lowercased text when lowercasing
        changes byte lengths, which only a few letters such as `İ` do)."""
        ids, starts, ends = self._sentencepiece.tokenize_with_offsets(self._prepare(tf.convert_to_tensor(strings, tf.string)))
        return ids, tf.cast(starts, tf.int64), tf.cast(ends, tf.int64)

    def detokenize(self, ids) -> tf.Tensor:
        """Decodes ids to text, as `sentencepiece` decodes them."""
        return self._sentencepiece.detokenize(ids)

    def save_assets(self, directory: PathLike) -> None:
        """Writes spiece.model and tokenizer_config.json, which `from_directory` reads."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / MODEL_FILE).write_bytes(self._proto)
        config = {"class": "SentencePieceTokenizer", "lowercase": self.lowercase, "special_tokens": self.special_tokens}
        (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")

    @classmethod
    def from_directory(cls, directory: PathLike) -> "SentencePieceTokenizer":
        directory = Path(directory)
        config_path = directory / CONFIG_FILE
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
        return cls(directory / MODEL_FILE, lowercase=config.get("lowercase", False), special_tokens=roles_in_config(config))
