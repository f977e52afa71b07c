"""The sentence-transformers layout of a Hugging Face folder: which pooling, whether it normalises, how long.

sentence-transformers keeps what turns token vectors into a sentence embedding beside the
transformer: `modules.json` lists the modules (Transformer, Pooling, Normalize), `1_Pooling/config.json`
names the pooling (older versions as `pooling_mode_*_tokens` flags, newer as `pooling_mode`), and
`sentence_bert_config.json` the `max_seq_length` (newer versions: the tokenizer's `model_max_length`).
tfbert's pooling modes carry sentence-transformers' names, so the mode passes through unchanged.
Written by hand: sentence-transformers reads and writes these files only together with a torch model.

Example:
    >>> read_sentence_transformers("all-MiniLM-L6-v2/")  # modules.json, 1_Pooling/ (not in the test assets)  # doctest: +SKIP
    SentenceTransformersLayout(pooling='mean', normalize=True, max_seq_length=256)
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from tfbert.artifacts.layout import SENTENCE_TRANSFORMERS_MODULE_CONFIG_FILE as MODULE_CONFIG_FILE
from tfbert.artifacts.layout import TOKENIZER_CONFIG_FILE

MODULES_FILE = "modules.json"
POOLING_FOLDER = "1_Pooling"
NORMALIZE_FOLDER = "2_Normalize"
SETTINGS_FILE = "sentence_bert_config.json"
# sentence-transformers' module types, by the names every version of it reads.
TRANSFORMER_MODULE = "sentence_transformers.models.Transformer"
POOLING_MODULE = "sentence_transformers.models.Pooling"
NORMALIZE_MODULE = "sentence_transformers.models.Normalize"
# sentence-transformers' pooling modes (`Pooling.POOLING_MODES`) and the flags older versions write.
POOLING_FLAGS = {"cls": "pooling_mode_cls_token", "max": "pooling_mode_max_tokens", "mean": "pooling_mode_mean_tokens",
                 "mean_sqrt_len_tokens": "pooling_mode_mean_sqrt_len_tokens",
                 "weightedmean": "pooling_mode_weightedmean_tokens", "lasttoken": "pooling_mode_lasttoken"}
DEFAULT_MAX_SEQ_LENGTH = 128


@dataclasses.dataclass(frozen=True)
class SentenceTransformersLayout:
    """What a sentence-transformers folder says beyond its transformer."""

    pooling: str
    normalize: bool
    max_seq_length: int | None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"cannot read {path}: {error}") from None


def _module_path(modules: list, kind: str) -> str | None:
    """The folder of the first module whose type ends with `kind` (`Pooling`, `Normalize`), or None."""
    for module in modules:
        if str(module.get("type", "")).rsplit(".", 1)[-1].lower() == kind.lower():
            return module.get("path", "")
    return None


def _pooling_mode(config: dict, path: Path) -> str:
    mode = config.get("pooling_mode")
    if isinstance(mode, list):
        mode = mode[0] if len(mode) == 1 else None
    if mode is None:
        chosen = [name for name, flag in POOLING_FLAGS.items() if config.get(flag)]
        mode = chosen[0] if len(chosen) == 1 else None
    if mode not in POOLING_FLAGS:
        raise ValueError(f"{path}: tfbert reads one pooling mode of {', '.join(POOLING_FLAGS)}, found {config}")
    return mode


def _max_seq_length(folder: Path) -> int | None:
    for name, key in ((SETTINGS_FILE, "max_seq_length"), (TOKENIZER_CONFIG_FILE, "model_max_length")):
        if (folder / name).is_file():
            value = _read_json(folder / name).get(key)
            if isinstance(value, int) and 0 < value < 1_000_000:
                return value
    return None


def read_sentence_transformers(folder: str | Path) -> SentenceTransformersLayout | None:
    """The pooling, normalisation and length of a sentence-transformers folder; None where `folder` is not one."""
    folder = Path(folder)
    if not (folder / MODULES_FILE).is_file():
        return None
    modules = _read_json(folder / MODULES_FILE)
    pooling_path = _module_path(modules, "Pooling") if isinstance(modules, list) else None
    if pooling_path is None:
        return None
    pooling = _pooling_mode(_read_json(folder / pooling_path / MODULE_CONFIG_FILE), folder / pooling_path)
    return SentenceTransformersLayout(pooling, _module_path(modules, "Normalize") is not None,
                                      _max_seq_length(folder))


def write_sentence_transformers(folder: str | Path, width: int, layout: SentenceTransformersLayout) -> None:
    """modules.json, sentence_bert_config.json, 1_Pooling/config.json and (when normalising) 2_Normalize/."""
    folder = Path(folder)
    if layout.pooling not in POOLING_FLAGS:
        raise ValueError(f"sentence-transformers has no pooling {layout.pooling!r}; expected one of "
                         f"{', '.join(POOLING_FLAGS)}")
    modules = [{"idx": 0, "name": "0", "path": "", "type": TRANSFORMER_MODULE},
               {"idx": 1, "name": "1", "path": POOLING_FOLDER, "type": POOLING_MODULE}]
    if layout.normalize:
        modules.append({"idx": 2, "name": "2", "path": NORMALIZE_FOLDER, "type": NORMALIZE_MODULE})
        (folder / NORMALIZE_FOLDER).mkdir(exist_ok=True)
    (folder / MODULES_FILE).write_text(json.dumps(modules, indent=2), encoding="utf-8")
    length = layout.max_seq_length or DEFAULT_MAX_SEQ_LENGTH
    (folder / SETTINGS_FILE).write_text(json.dumps({"max_seq_length": length, "do_lower_case": False}, indent=2),
                                        encoding="utf-8")
    (folder / POOLING_FOLDER).mkdir(exist_ok=True)
    flags = {flag: mode == layout.pooling for mode, flag in POOLING_FLAGS.items()}
    (folder / POOLING_FOLDER / MODULE_CONFIG_FILE).write_text(
        json.dumps({"word_embedding_dimension": width, **flags, "include_prompt": True}, indent=2), encoding="utf-8")
