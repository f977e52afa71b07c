"""Hugging Face tokenizer folders as tfbert tokenizers with the same ids.

A folder holds one of (first found wins):

| files | tfbert tokenizer | settings read from `tokenizer_config.json` |
|---|---|---|
| `vocab.txt` | `WordPieceTokenizer` | `do_lower_case` (default true), `strip_accents` |
| `spiece.model` | `SentencePieceTokenizer` | `do_lower_case` (default false), `keep_accents` (false: NFKD and accents dropped, as `AlbertTokenizer`) |
| `sentencepiece.bpe.model` | `SentencePieceTokenizer` in fairseq's id layout (XLM-R, CamemBERT) | as `spiece.model` |
| `vocab.json` + `merges.txt` | `BytePairTokenizer` (RoBERTa, GPT-2) | `add_prefix_space` must be false |
| a family's own file (DeBERTa's `spm.model`) | what its reader gives (`HuggingFaceFormat.tokenizer_files`) | the reader's |
| `tokenizer.json` alone | any of the three, from its `model` and `normalizer` | the normalizer's lower-casing and accent stripping |

Special tokens (`cls_token`, ...) come from `tokenizer_config.json` or `special_tokens_map.json`.
Tokens added to a WordPiece or byte-level BPE vocabulary are plain vocabulary entries, as in tfbert.

fairseq's layout (XLM-R's `sentencepiece.bpe.model`) numbers `<s> <pad> </s> <unk>` first, then the
SentencePiece pieces after the model's own three specials, then `<mask>`: every piece one above its
SentencePiece id. tfbert rewrites the model in that order (scores and segmentation unchanged), so its
ids are the model's embedding rows.

Example:
    >>> read_huggingface_tokenizer("all-MiniLM-L6-v2/").tokenize(["hello"])
    <tf.RaggedTensor [[7592]]>
"""

from __future__ import annotations

import base64
import importlib
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping

from sentencepiece import sentencepiece_model_pb2 as model_pb2

from tfbert import architectures
from tfbert.artifacts.checks import json_object
from tfbert.artifacts.files import check_huggingface_tokenizer_settings, read_huggingface_tokenizer_state
from tfbert.artifacts.layout import HUGGINGFACE_TOKENIZER_FILE as TOKENIZER_FILE
from tfbert.artifacts.layout import TOKENIZER_CONFIG_FILE as CONFIG_FILE
from tfbert.text._files import PathLike, read_json
from tfbert.text._unigram import CONTROL, NORMAL, UNIGRAM, UNKNOWN
from tfbert.text.base import Tokenizer
from tfbert.text.byte_pair_tokenizer import BytePairTokenizer
from tfbert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from tfbert.text.wordpiece_tokenizer import WordPieceTokenizer

SPECIAL_TOKENS_FILE = "special_tokens_map.json"
FAIRSEQ_MODEL_FILE = "sentencepiece.bpe.model"
# fairseq's dictionary starts with these, whatever the SentencePiece model holds.
FAIRSEQ_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
# (do_lower_case, keep_accents) of the SentencePiece classes whose defaults normalise (others: neither).
_CLASS_DEFAULTS = {"AlbertTokenizer": (True, False), "XLNetTokenizer": (False, False)}
_ROLES = {"cls": "cls_token", "sep": "sep_token", "pad": "pad_token", "mask": "mask_token", "unk": "unk_token",
          "bos": "bos_token", "eos": "eos_token"}


def is_huggingface_tokenizer(folder: PathLike) -> bool:
    """Whether `folder` holds one of the files a Hugging Face tokenizer is read from."""
    folder = Path(folder)
    return folder.is_dir() and any((folder / name).is_file() for name in _readers())


def _token(value: Any) -> str | None:
    """A special token as `tokenizer_config.json` writes it: a string or an AddedToken mapping."""
    return value.get("content") if isinstance(value, Mapping) else value


def _settings(folder: Path) -> dict[str, Any]:
    settings = {}
    for name in (SPECIAL_TOKENS_FILE, CONFIG_FILE):
        if (folder / name).is_file():
            data = json_object(folder / name)
            check_huggingface_tokenizer_settings(data, folder / name)
            settings.update(data)
    return settings


def _special_tokens(settings: Mapping[str, Any], vocabulary) -> dict[str, str | None]:
    """The roles the settings name whose tokens are in `vocabulary`."""
    found = {role: _token(settings.get(key)) for role, key in _ROLES.items()}
    return {role: token for role, token in found.items() if token is not None and token in vocabulary}


def _wordpiece_casing(lowercase: bool, strip_accents: bool | None, source: Path) -> bool:
    if strip_accents is not None and strip_accents != lowercase:
        raise ValueError(f"{source}: strip_accents {strip_accents} with do_lower_case {lowercase}; tfbert's WordPiece "
                         "strips accents exactly when it lower-cases (BERT's uncased and cased settings)")
    return lowercase


def _from_vocab_txt(folder: Path, settings: Mapping[str, Any]) -> WordPieceTokenizer:
    lowercase = _wordpiece_casing(bool(settings.get("do_lower_case", True)), settings.get("strip_accents"),
                                  folder / CONFIG_FILE)
    tokens = set((folder / "vocab.txt").read_text(encoding="utf-8").splitlines())
    return WordPieceTokenizer(folder / "vocab.txt", lowercase=lowercase, special_tokens=_special_tokens(settings, tokens))


def sentencepiece_tokenizer(proto: bytes, settings: Mapping[str, Any]) -> SentencePieceTokenizer:
    """A SentencePiece model (bytes) with a folder's settings: casing by `tokenizer_class`'s defaults, special
    tokens by role where the model has them."""
    model = model_pb2.ModelProto.FromString(proto)
    pieces = {piece.piece for piece in model.pieces}
    lowercase, keep_accents = _CLASS_DEFAULTS.get(str(settings.get("tokenizer_class", "")).removesuffix("Fast"),
                                                  (False, True))
    return SentencePieceTokenizer(proto, lowercase=bool(settings.get("do_lower_case", lowercase)),
                                  strip_accents=not settings.get("keep_accents", keep_accents),
                                  special_tokens=_special_tokens(settings, pieces))


def fairseq_layout(proto: bytes) -> bytes:
    """A SentencePiece model rewritten in fairseq's id order (see the module notes): `<s> <pad> </s> <unk>`,
    the model's pieces after its first three, then `<mask>`.

    Example:
        >>> proto = open("botchan_en_unigram_1000.model", "rb").read()
        >>> model_pb2.ModelProto.FromString(fairseq_layout(proto)).pieces[3].piece
        '<unk>'
    """
    model = model_pb2.ModelProto.FromString(proto)
    layout = model_pb2.ModelProto()
    layout.CopyFrom(model)
    del layout.pieces[:]
    for token in FAIRSEQ_SPECIALS:
        layout.pieces.add(piece=token, score=0.0, type=UNKNOWN if token == "<unk>" else CONTROL)
    for piece in model.pieces[3:]:
        layout.pieces.add().CopyFrom(piece)
    layout.pieces.add(piece="<mask>", score=0.0, type=CONTROL)
    spec = layout.trainer_spec
    spec.bos_id, spec.pad_id, spec.eos_id, spec.unk_id = range(4)
    spec.bos_piece, spec.pad_piece, spec.eos_piece, spec.unk_piece = FAIRSEQ_SPECIALS
    return layout.SerializeToString()


def _from_spiece(folder: Path, settings: Mapping[str, Any]) -> SentencePieceTokenizer:
    return sentencepiece_tokenizer((folder / "spiece.model").read_bytes(), settings)


def _from_fairseq(folder: Path, settings: Mapping[str, Any]) -> SentencePieceTokenizer:
    roles = {"cls_token": "<s>", "sep_token": "</s>", "pad_token": "<pad>", "mask_token": "<mask>",
             "unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>", **settings}
    return sentencepiece_tokenizer(fairseq_layout((folder / FAIRSEQ_MODEL_FILE).read_bytes()), roles)


def _from_vocab_json(folder: Path, settings: Mapping[str, Any]) -> BytePairTokenizer:
    if settings.get("add_prefix_space"):
        raise ValueError(f"{folder / CONFIG_FILE}: add_prefix_space true; tfbert's byte-level BPE adds no prefix space")
    vocabulary = read_json(folder / "vocab.json", "byte-level BPE vocabulary")
    return BytePairTokenizer(vocabulary, folder / "merges.txt", special_tokens=_special_tokens(settings, vocabulary))


def _normalizers(state: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    normalizer = state.get("normalizer") or {}
    return list(normalizer.get("normalizers", [])) if normalizer.get("type") == "Sequence" else [normalizer]


def _unigram_proto(state: Mapping[str, Any], settings: Mapping[str, Any]) -> bytes:
    """tokenizer.json's Unigram model and Precompiled normalizer as a SentencePiece model."""
    model = state["model"]
    specials = {token["content"] for token in state.get("added_tokens", []) if token.get("special")}
    proto = model_pb2.ModelProto()
    proto.trainer_spec.model_type = UNIGRAM
    proto.trainer_spec.unk_id = model.get("unk_id") or 0
    for index, (piece, score) in enumerate(model["vocab"]):
        kind = UNKNOWN if index == proto.trainer_spec.unk_id else CONTROL if piece in specials else NORMAL
        proto.pieces.add(piece=piece, score=score, type=kind)
    charsmaps = [step["precompiled_charsmap"] for step in _normalizers(state) if step.get("type") == "Precompiled"]
    proto.normalizer_spec.name = "tokenizer_json"
    if charsmaps and charsmaps[0]:
        proto.normalizer_spec.precompiled_charsmap = base64.b64decode(charsmaps[0])
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = True
    proto.normalizer_spec.escape_whitespaces = True
    return proto.SerializeToString()


def _from_tokenizer_json(folder: Path, settings: Mapping[str, Any]) -> Tokenizer:
    state = read_huggingface_tokenizer_state(folder / TOKENIZER_FILE)   # its model's fields checked
    kind = (state.get("model") or {}).get("type")
    steps = {step.get("type"): step for step in _normalizers(state)}
    if kind == "WordPiece":
        bert = steps.get("BertNormalizer", {})
        lowercase = _wordpiece_casing(bool(bert.get("lowercase", "Lowercase" in steps)), bert.get("strip_accents"),
                                      folder / TOKENIZER_FILE)
        vocabulary = sorted(state["model"]["vocab"], key=state["model"]["vocab"].get)
        return WordPieceTokenizer(vocabulary, lowercase=lowercase,
                                  special_tokens=_special_tokens(settings, set(vocabulary)))
    if kind == "Unigram":
        accents = {"keep_accents": "StripAccents" not in steps, "do_lower_case": "Lowercase" in steps}
        return sentencepiece_tokenizer(_unigram_proto(state, settings), {**settings, **accents})
    if kind == "BPE" and (state.get("pre_tokenizer") or {}).get("type") == "ByteLevel":
        if state["pre_tokenizer"].get("add_prefix_space"):
            raise ValueError(f"{folder / TOKENIZER_FILE}: add_prefix_space true; tfbert's byte-level BPE adds none")
        merges = [" ".join(merge) if isinstance(merge, list) else merge for merge in state["model"]["merges"]]
        vocabulary = dict(state["model"]["vocab"])
        for token in state.get("added_tokens", []):
            vocabulary.setdefault(token["content"], token["id"])
        return BytePairTokenizer(vocabulary, merges, special_tokens=_special_tokens(settings, vocabulary))
    raise ValueError(f"{folder / TOKENIZER_FILE}: model type {kind!r} is not one tfbert reads (WordPiece, Unigram, "
                     "byte-level BPE)")


# The files every family shares, in the order they are tried; then the families' own, then tokenizer.json.
_READERS = {"vocab.txt": _from_vocab_txt, "spiece.model": _from_spiece, FAIRSEQ_MODEL_FILE: _from_fairseq,
            "vocab.json": _from_vocab_json}
Reader = Callable[[Path, Mapping[str, Any]], Tokenizer]


def _family_reader(name: str) -> Reader:
    module, _, function = name.partition(":")
    return lambda folder, settings: getattr(importlib.import_module(module), function)(folder, settings)


def _readers() -> dict[str, Reader]:
    """Each file a Hugging Face tokenizer is read from and its reader, in the order they are tried."""
    families = {}
    for family in architectures.names():
        entry = architectures.get(family).formats.get("huggingface")
        for file, reader in (entry.tokenizer_files if entry is not None else {}).items():
            families.setdefault(file, _family_reader(reader))
    return {**_READERS, **families, TOKENIZER_FILE: _from_tokenizer_json}


def read_huggingface_tokenizer(folder: PathLike) -> Tokenizer:
    """The tfbert tokenizer of a Hugging Face tokenizer folder (see the module notes).

    Raises `FileNotFoundError` when the folder holds none of the files, `ValueError` for settings
    tfbert's tokenizers do not have.

    Example:
        >>> read_huggingface_tokenizer("all-MiniLM-L6-v2/").lowercase
        True
    """
    folder = Path(folder)
    settings = _settings(folder)
    readers = _readers()
    for name, reader in readers.items():
        if (folder / name).is_file():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return reader(folder, settings)
    raise FileNotFoundError(f"{folder}: no tokenizer files; expected a tfbert tokenizer_config.json naming its class or "
                            f"one of {', '.join(readers)}")
