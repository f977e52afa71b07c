"""`tfbert.json`: what a folder tfbert wrote is, in one small versioned file beside the model.

Every writer (vocab, `vocab add`, pretraining run, finetune / distill model dir, converted checkpoint,
export's `assets.extra/`, a TF Lite export's folder) calls `write_manifest`; `tfbert.artifacts.open` reads it back. Fields:

| field | what |
|---|---|
| `format_version` | this file's layout (`FORMAT_VERSION`); readers refuse a newer one |
| `kind` | `vocab`, `pretraining-run`, `model-dir`, `converted-checkpoint`, `export` (a SavedModel) or `tflite-export` (`KINDS`) |
| `family` | the architecture (`bert`, `roberta`, ...); None for a bare vocabulary |
| `config` | the encoder config (`EncoderConfig.to_dict()`) or None |
| `preprocessor` | `tokenizer` (class), `lowercase`, `packing_style`, `sequence_length` |
| `task` | `task` (classification, regression, embedding, ...), `labels`, `pooling` (sentence-transformers' mode names), `normalize`, `heads` |
| `provenance` | `source` (the path it was made from: `--init-from`, `--pretrained`, `--student`, the exported or converted model), `source_kind` (that source's kind as `open` names it: `huggingface`, `tf1`, `keras-hub`, `pretraining-run`, ...), `source_step` (the source's training step), `step` (a pretraining run's newest checkpoint step, recorded when it stops; else the step its weights come from), `tfbert_version`, `command`, `model_file` (the `.keras` file it describes), `precision` (a pretraining run: `policy` and `reason` of the dtype policy it trains in, chosen at its start and kept on resume) |

The file is written under a temporary name and renamed (`os.replace`), so a reader sees the old
file or the new one, never half of one. Written by hand: a few lines of JSON need no library.

Example:
    >>> write_manifest("runs/a", "model-dir", family="bert", task={"task": "classification", "labels": ["neg", "pos"]})
    PosixPath('runs/a/tfbert.json')
    >>> read_manifest("runs/a")["task"]["labels"]
    ['neg', 'pos']
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from tfbert import __version__
from tfbert.artifacts.checks import FileContentError, json_object, one_of
from tfbert.artifacts.files import check_manifest_fields
from tfbert.artifacts.layout import MANIFEST_FILE

FORMAT_VERSION = 1
KINDS = ("vocab", "pretraining-run", "model-dir", "converted-checkpoint", "export", "tflite-export")
# The kinds a `tfbert export` writes: a SavedModel, a TF Lite folder. They run as they are (`SavedModelClient`).
EXPORT_KINDS = ("export", "tflite-export")


def _tfbert_version() -> str:
    return __version__


def preprocessor_fields(preprocessor: Any = None, tokenizer: Any = None) -> dict[str, Any] | None:
    """The manifest's `preprocessor` entry from a `Preprocessor` (or only a tokenizer); None for neither."""
    tokenizer = tokenizer if tokenizer is not None else getattr(preprocessor, "tokenizer", None)
    if preprocessor is None and tokenizer is None:
        return None
    fields: dict[str, Any] = {}
    if tokenizer is not None:
        fields["tokenizer"] = type(tokenizer).__name__
        fields["lowercase"] = getattr(tokenizer, "lowercase", None)
        fields["vocabulary_size"] = int(tokenizer.vocabulary_size())
    if preprocessor is not None:
        fields["packing_style"] = preprocessor.packing_style
        fields["sequence_length"] = int(preprocessor.sequence_length)
    return fields


def source_fields(source: Any) -> dict[str, Any]:
    """`write_manifest`'s `source`, `source_kind` and `source_step` from an `Artifact` (`tfbert.artifacts.open`);
    all None for None.

    Example:
        >>> import tfbert
        >>> source_fields(tfbert.artifacts.open("runs/bert"))
        {'source': 'runs/bert', 'source_kind': 'pretraining-run', 'source_step': 2}
    """
    if source is None:
        return {"source": None, "source_kind": None, "source_step": None}
    return {"source": str(source.path), "source_kind": source.kind, "source_step": source.step}


def write_manifest(folder: str | os.PathLike, kind: str, *, family: str | None = None,
                   config: Mapping[str, Any] | None = None, preprocessor: Mapping[str, Any] | None = None,
                   task: Mapping[str, Any] | None = None, source: str | None = None, source_kind: str | None = None,
                   source_step: int | None = None, step: int | None = None, command: str | None = None,
                   model_file: str | None = None, precision: Mapping[str, str] | None = None) -> Path:
    """Writes `folder/tfbert.json` atomically; returns its path (see the module notes for the fields)."""
    if kind not in KINDS:
        raise ValueError(f"unknown artifact kind {kind!r}; expected one of {', '.join(KINDS)}")
    manifest = {"format_version": FORMAT_VERSION, "kind": kind, "family": family,
                "config": dict(config) if config is not None else None,
                "preprocessor": dict(preprocessor) if preprocessor is not None else None,
                "task": dict(task) if task is not None else None,
                "provenance": {"source": None if source is None else str(source), "source_kind": source_kind,
                               "source_step": source_step, "step": step, "tfbert_version": _tfbert_version(),
                               "command": command, **({"model_file": model_file} if model_file else {}),
                               **({"precision": dict(precision)} if precision else {})}}
    return _write(Path(folder) / MANIFEST_FILE, manifest)


def _write(path: Path, manifest: Mapping[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{MANIFEST_FILE}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return path


def record_step(folder: str | os.PathLike, step: int) -> Path | None:
    """Sets the manifest's `provenance.step` to `step` (a pretraining run when it stops); None where `folder`
    has no manifest or is remote (`gs://...`: its manifest keeps the step it was written with)."""
    if "://" in str(folder):
        return None
    manifest = read_manifest(folder)
    if manifest is None:
        return None
    manifest["provenance"] = {**(manifest.get("provenance") or {}), "step": int(step)}
    return _write(Path(folder) / MANIFEST_FILE, manifest)


def record_precision(folder: str | os.PathLike, policy: str, reason: str) -> Path | None:
    """Sets the manifest's `provenance.precision` (a pretraining run's dtype policy and why); None where `folder`
    has no manifest or is remote (as `record_step`)."""
    if "://" in str(folder):
        return None
    manifest = read_manifest(folder)
    if manifest is None:
        return None
    manifest["provenance"] = {**(manifest.get("provenance") or {}), "precision": {"policy": policy, "reason": reason}}
    return _write(Path(folder) / MANIFEST_FILE, manifest)


class NewerManifest(FileContentError):
    """A manifest written by a newer tfbert (`format_version` above `FORMAT_VERSION`): the folder is fine."""


def read_manifest(folder: str | os.PathLike) -> dict[str, Any] | None:
    """`folder/tfbert.json` as a dict, or None where there is none; `FileContentError` (a `ValueError`) naming the
    field for an unreadable or damaged one, `NewerManifest` for a newer one. Every field is checked before use
    (`tfbert.artifacts.files.check_manifest_fields`): paths stay inside the folder, fields have their types."""
    path = Path(folder) / MANIFEST_FILE
    if not path.is_file():
        return None
    manifest = json_object(path)
    version = manifest.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        found = "missing" if "format_version" not in manifest else repr(version)
        raise FileContentError(path, "format_version", f"is {found}, expected a whole number (this tfbert writes "
                                                       f"{FORMAT_VERSION})")
    if version > FORMAT_VERSION:
        raise NewerManifest(path, "format_version", f"is {version}, newer than this tfbert reads ({FORMAT_VERSION})",
                            "upgrade tfbert (pip install -U tfbert) to read this folder")
    one_of(manifest, "kind", path, KINDS)
    check_manifest_fields(manifest, path, KINDS)
    return manifest
