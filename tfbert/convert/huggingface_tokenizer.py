"""Write a tfbert tokenizer as a Hugging Face tokenizer folder that gives the same ids.

`transformers`' own tokenizer classes write the files (`vocab.txt`, `spiece.model` or
`vocab.json` + `merges.txt`, with `tokenizer.json`, `tokenizer_config.json` and
`special_tokens_map.json`), set the way tfbert's tokenizers work:

- WordPiece: lower-casing and accent stripping together (`do_lower_case` = `strip_accents` =
  tfbert's `lowercase`), CJK characters split, as BERT;
- SentencePiece (unigram): `AlbertTokenizer`; the model itself normalises, so `keep_accents` is
  true (the class's default strips accents with NFKD and turns Hangul into unknown jamo) and
  `do_lower_case` is tfbert's `lowercase`; the ids are the model's own (no fairseq shift). That
  class fixes the unknown id at ALBERT's 1, so a model with another (`<unk>` first, as
  sentencepiece's defaults) is written for `PreTrainedTokenizerFast`, which reads tokenizer.json
  as it is;
- byte-level BPE: RoBERTa's, without a prefix space.

Pairs are packed in the family's style (`[CLS] a [SEP] b [SEP]` with type ids 0/1, or
`<s> a </s></s> b </s>`), as tfbert's `Preprocessor` packs them. Tokens appended to a vocabulary
(`tfbert.text.add_tokens`) stay plain vocabulary entries in both. Special-token strings typed in
the text (`"[MASK]"`) differ: Hugging Face reads them as the special token, tfbert as text.

Example:
    >>> from tfbert.text import load_tokenizer
    >>> write_huggingface_tokenizer(load_tokenizer("runs/bert/tokenizer"), "hf/bert", packing_style="bert")
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from tfbert.artifacts.layout import HUGGINGFACE_TOKENIZER_FILE as TOKENIZER_FILE
from tfbert.artifacts.layout import TOKENIZER_CONFIG_FILE as CONFIG_FILE
from tfbert.text import BytePairTokenizer, SentencePieceTokenizer, WordPieceTokenizer
from tfbert.text import _unigram
from tfbert.text.base import Tokenizer
from tfbert.text.sentencepiece_tokenizer import MODEL_FILE

SPECIAL_TOKENS_FILE = "special_tokens_map.json"
# transformers' class that reads tokenizer.json as it is.
GENERIC_CLASS = "PreTrainedTokenizerFast"
# Role names of tfbert tokenizers and the `transformers` keyword each one is.
_ROLE_ARGUMENTS = {"cls": "cls_token", "sep": "sep_token", "pad": "pad_token", "mask": "mask_token",
                   "unk": "unk_token", "bos": "bos_token", "eos": "eos_token"}


def _special_arguments(tokenizer: Tokenizer, defaults: dict[str, Any]) -> dict[str, Any]:
    """`cls_token=...` etc. for every role the tfbert tokenizer has; `defaults` for the roles it lacks."""
    found = {_ROLE_ARGUMENTS[role]: token for role, token in tokenizer.special_tokens.items() if token is not None}
    return {**defaults, **found}


def _wordpiece(tokenizer: WordPieceTokenizer, scratch: Path):
    from transformers import BertTokenizer

    tokenizer.save_assets(scratch)
    return BertTokenizer(vocab=str(scratch / "vocab.txt"), do_lower_case=tokenizer.lowercase,
                         strip_accents=tokenizer.lowercase, tokenize_chinese_chars=True,
                         **_special_arguments(tokenizer, {}))


def _sentencepiece(tokenizer: SentencePieceTokenizer, scratch: Path):
    from transformers import AlbertTokenizer, AutoTokenizer

    tokenizer.save_assets(scratch)
    if _unigram.parse((scratch / MODEL_FILE).read_bytes()).trainer_spec.model_type != _unigram.UNIGRAM:
        raise ValueError("Hugging Face's SentencePiece tokenizers (AlbertTokenizer, XLMRobertaTokenizer) hold unigram "
                         "models; this tokenizer's SentencePiece model is BPE")
    settings = {"tokenizer_class": AlbertTokenizer.__name__, "do_lower_case": tokenizer.lowercase,
                "keep_accents": True, "remove_space": True,
                **_special_arguments(tokenizer, {"bos_token": None, "eos_token": None, "mask_token": None})}
    (scratch / CONFIG_FILE).write_text(json.dumps(settings), encoding="utf-8")
    return AutoTokenizer.from_pretrained(scratch)


def _byte_bpe(tokenizer: BytePairTokenizer, scratch: Path):
    from transformers import RobertaTokenizer

    tokenizer.save_assets(scratch)
    return RobertaTokenizer(vocab=str(scratch / "vocab.json"), merges=str(scratch / "merges.txt"),
                            add_prefix_space=False, **_special_arguments(tokenizer, {}))


# What the model reads, by packing style: RoBERTa-style models have one segment type.
_MODEL_INPUTS = {"bert": ("input_ids", "token_type_ids", "attention_mask"), "roberta": ("input_ids", "attention_mask")}
# Each tfbert tokenizer class and how `transformers` builds the equal tokenizer from its files.
_BUILDERS: dict[type, Callable[[Any, Path], Any]] = {
    WordPieceTokenizer: _wordpiece,
    SentencePieceTokenizer: _sentencepiece,
    BytePairTokenizer: _byte_bpe,
}


def _post_processor(tokenizer: Tokenizer, packing_style: str):
    """The template that adds the special tokens as tfbert's packer does for `packing_style`."""
    from tokenizers.processors import TemplateProcessing

    cls, sep = tokenizer.special_tokens["cls"], tokenizer.special_tokens["sep"]
    if cls is None or sep is None:
        raise ValueError("the tokenizer has no cls/sep special tokens to pack sequences with")
    special = [(cls, tokenizer.token_to_id(cls)), (sep, tokenizer.token_to_id(sep))]
    if packing_style == "roberta":
        return TemplateProcessing(single=f"{cls} $A {sep}", pair=f"{cls} $A {sep} {sep} $B {sep}",
                                  special_tokens=special)
    return TemplateProcessing(single=f"{cls}:0 $A:0 {sep}:0", pair=f"{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1",
                              special_tokens=special)


def _set_unknown_id(folder: Path, unknown_id: int) -> None:
    """A unigram model's `unk_id` set to the SentencePiece model's own. transformers' SentencePiece classes fix it
    (ALBERT's 1, XLM-R's 3) when they load, so a folder with another is read by the generic class, which takes
    tokenizer.json as written."""
    state = json.loads((folder / TOKENIZER_FILE).read_text(encoding="utf-8"))
    if state["model"].get("unk_id", unknown_id) == unknown_id:
        return
    state["model"]["unk_id"] = unknown_id
    (folder / TOKENIZER_FILE).write_text(json.dumps(state, ensure_ascii=False, indent=2), encoding="utf-8")
    settings = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    settings["tokenizer_class"] = GENERIC_CLASS
    (folder / CONFIG_FILE).write_text(json.dumps(settings, ensure_ascii=False, indent=2), encoding="utf-8")


def write_huggingface_tokenizer(tokenizer: Tokenizer, folder: str | Path, *, packing_style: str) -> None:
    """Writes the Hugging Face files of `tokenizer`, packing in `packing_style` (the model family's), into
    `folder` (see the module notes); `ValueError` for a tokenizer class with no equivalent."""
    builder = next((build for cls, build in _BUILDERS.items() if isinstance(tokenizer, cls)), None)
    if builder is None:
        raise ValueError(f"{type(tokenizer).__name__} has no Hugging Face equivalent; supported: "
                         f"{', '.join(cls.__name__ for cls in _BUILDERS)}")
    folder = Path(folder)
    with tempfile.TemporaryDirectory(prefix="tfbert-hf-tokenizer-") as scratch:
        converted = builder(tokenizer, Path(scratch))
        converted.backend_tokenizer.post_processor = _post_processor(tokenizer, packing_style)
        converted.model_input_names = list(_MODEL_INPUTS[packing_style])
        converted.init_kwargs["model_input_names"] = converted.model_input_names
        converted.save_pretrained(folder)
        _set_unknown_id(folder, tokenizer.unk_id)
        for vocabulary in Path(scratch).iterdir():
            if vocabulary.name != CONFIG_FILE and not (folder / vocabulary.name).exists():
                shutil.copyfile(vocabulary, folder / vocabulary.name)
    if not (folder / SPECIAL_TOKENS_FILE).is_file():
        roles = {_ROLE_ARGUMENTS[role]: token for role, token in tokenizer.special_tokens.items() if token is not None}
        (folder / SPECIAL_TOKENS_FILE).write_text(json.dumps(roles, indent=2, ensure_ascii=False), encoding="utf-8")
