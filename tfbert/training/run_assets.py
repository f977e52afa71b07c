"""A run directory's assets (`config.yaml`, `preprocessor.json`, `tokenizer/`, the manifest), never half-written.

`save_run_assets` writes a pretraining run's assets and its manifest `tfbert.json` (whose provenance
`record_run_step` brings up to the run's newest checkpoint at the end) through `install_run_assets`.
`install_run_assets` compares what a run is about to write with what its `--model-dir` already
holds and refuses a rerun with another config or tokenizer *before* anything is written (the
checkpoints would not fit them). New files are written under a temporary name in the same folder
and renamed, so a kill leaves the old file or the new one, never a mix. `remove_interrupted_writes`
deletes what a killed run left half-written (the table `INTERRUPTED_WRITES`): TensorFlow's
`ckpt-N_temp/` folders and temporary files, a checkpoint's files that the `checkpoint` index does not
list (a kill between them and the index), these temporary names, and an `encoder.keras` that is not
a complete file.

Written by hand: TensorFlow's checkpoints are already atomic (see `checkpointing`), but nothing in
TensorFlow or Keras compares or installs the small files around them.

    >>> install_run_assets("/tmp/staged", "runs/a")   # ValueError if runs/a holds another config; moves files out of a staged copy  # doctest: +SKIP
    >>> remove_interrupted_writes("runs/a")
    []
"""

from __future__ import annotations

import filecmp
import glob
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path

import tensorflow as tf
import yaml

from tfbert import artifacts
from tfbert.artifacts.layout import RUN_CONFIG_FILE as CONFIG_FILE
from tfbert.artifacts.layout import RUN_ENCODER_FILE as ENCODER_FILE
from tfbert.artifacts.layout import TOKENIZER_FOLDER
from tfbert.artifacts.loading import newest_checkpoint_step
from tfbert.artifacts.manifest import preprocessor_fields, record_step, write_manifest
from tfbert.config import ModelConfig, save_config
from tfbert.distribute.precision import PrecisionChoice
from tfbert.outputs import CHECKPOINT_INDEX, TEMPORARY_MARK, temporary_name
from tfbert.text.base import Tokenizer
from tfbert.training.pretraining_inputs import pretraining_preprocessor
from tfbert.training.run_precision import precision_record


class RunMismatch(ValueError):
    """The run directory already holds a run with another config or tokenizer."""


def _first_difference(old: object, new: object, key: str = "") -> str:
    if isinstance(old, dict) and isinstance(new, dict):
        for name in [*old, *(name for name in new if name not in old)]:
            if old.get(name) != new.get(name):
                return _first_difference(old.get(name), new.get(name), f"{key}.{name}" if key else name)
    return f"{key or 'the file'}: {old!r} here, {new!r} now"


def _config_difference(existing: str, staged: Path) -> str | None:
    with tf.io.gfile.GFile(existing, "rb") as file:
        old = file.read()
    new = (staged / CONFIG_FILE).read_bytes()
    if old == new:
        return None
    return _first_difference(yaml.safe_load(old), yaml.safe_load(new))


def _tokenizer_difference(existing: str, staged: Path) -> str | None:
    old = {name for name in tf.io.gfile.listdir(existing)}
    new = {path.name for path in (staged / TOKENIZER_FOLDER).iterdir()}
    if old != new:
        return f"files {', '.join(sorted(old ^ new))} differ"
    for name in sorted(new):
        with tf.io.gfile.GFile(f"{existing}/{name}", "rb") as file:
            if file.read() != (staged / TOKENIZER_FOLDER / name).read_bytes():
                return f"{name} differs"
    return None


def check_same_run(staged: str | Path, model_dir: str) -> None:
    """Raises RunMismatch when `model_dir` holds a `tokenizer/` or `config.yaml` other than the `staged` ones.

    The tokenizer is compared first: another vocabulary also changes the config's `vocab_size`. A run
    that never wrote a checkpoint (one that failed or was stopped before it) is no run to keep: its
    assets are replaced, so a corrected rerun goes ahead.
    """
    staged = Path(staged)
    if not tf.io.gfile.exists(f"{model_dir.rstrip('/')}/{CHECKPOINT_INDEX}"):
        return   # no checkpoint yet: nothing was trained with the assets there, which are replaced
    config, tokenizer = f"{model_dir.rstrip('/')}/{CONFIG_FILE}", f"{model_dir.rstrip('/')}/{TOKENIZER_FOLDER}"
    if tf.io.gfile.exists(tokenizer) and (staged / TOKENIZER_FOLDER).is_dir():
        difference = _tokenizer_difference(tokenizer, staged)
        if difference:
            raise RunMismatch(f"{model_dir} holds a run with another tokenizer ({TOKENIZER_FOLDER}/: {difference}); "
                              f"nothing was changed: resume it with --tokenizer {tokenizer}, give another "
                              "--model-dir, or add --overwrite to replace it")
    if tf.io.gfile.exists(config):
        difference = _config_difference(config, staged)
        if difference:
            raise RunMismatch(f"{model_dir} holds a run with another config ({difference}); nothing was changed: "
                              f"resume it with --config {config}, give another --model-dir, or add --overwrite to "
                              "replace it")


def _same(staged: Path, target: str) -> bool:
    if staged.is_dir():
        return os.path.isdir(target) and not filecmp.dircmp(staged, target).diff_files and \
            sorted(os.listdir(staged)) == sorted(os.listdir(target))
    return os.path.isfile(target) and filecmp.cmp(staged, target, shallow=False)


def _install_local(staged: Path, target: str) -> None:
    """Copies `staged` beside `target` under a temporary name, then renames it into place."""
    if _same(staged, target):
        return   # unchanged: not rewritten, so its time stamp stays
    temporary = temporary_name(target)
    if staged.is_dir():
        shutil.copytree(staged, temporary)
        if os.path.isdir(target):
            shutil.rmtree(target)   # a folder cannot be renamed over another; check_same_run allowed replacing it
        os.rename(temporary, target)
    else:
        shutil.copyfile(staged, temporary)
        os.replace(temporary, target)


def _install_remote(staged: Path, target: str) -> None:
    """Buckets (gs://) have no rename; their objects are written whole, so a plain copy is used."""
    for path in sorted([staged] if staged.is_file() else staged.rglob("*")):
        if path.is_file():
            destination = target if path == staged else f"{target}/{path.relative_to(staged).as_posix()}"
            tf.io.gfile.makedirs(destination.rsplit("/", 1)[0])
            tf.io.gfile.copy(str(path), destination, overwrite=True)


def install_run_assets(staged: str | Path, model_dir: str) -> None:
    """Checks (`check_same_run`), then installs each file and folder of `staged` into `model_dir`."""
    check_same_run(staged, model_dir)
    remote = "://" in model_dir
    if not remote:
        os.makedirs(model_dir, exist_ok=True)
    for entry in sorted(Path(staged).iterdir()):
        target = f"{model_dir.rstrip('/')}/{entry.name}"
        (_install_remote if remote else _install_local)(entry, target)


def _always(path: str, referenced: frozenset[str] | None) -> bool:
    return True


def _unreferenced(path: str, referenced: frozenset[str] | None) -> bool:
    """A checkpoint's file whose checkpoint the `checkpoint` index does not list (kept when the index is unreadable)."""
    prefix = _CHECKPOINT_PREFIX.match(os.path.basename(path))
    return referenced is not None and prefix is not None and prefix[1] not in referenced


def _not_a_zip(path: str, referenced: frozenset[str] | None) -> bool:
    return os.path.isfile(path) and not zipfile.is_zipfile(path)   # a 0-byte or cut-off .keras file


_CHECKPOINT_PREFIX = re.compile(r"^(ckpt-\d+)[._]")   # `ckpt-12` of `ckpt-12.index`, `ckpt-12.data-...`
# What a killed run can leave half-written in its folder: a glob pattern under the folder, and whether a match is
# such a leftover (given the checkpoints the `checkpoint` index lists). A new kind of checkpoint file adds a row.
INTERRUPTED_WRITES = (
    ("ckpt-*_temp", _always),          # TensorFlow's shards of a checkpoint being written, before their merge
    ("ckpt-*.tempstate*", _always),    # TensorFlow's checkpoint files before their rename
    ("ckpt-*.index", _unreferenced),   # a checkpoint written whole, killed before the index named it
    ("ckpt-*.data-*", _unreferenced),
    (f"{CHECKPOINT_INDEX}.tmp*", _always),   # the index itself before its rename
    (".scratch", _always),             # a killed non-chief worker's checkpoint (tfbert.training.checkpointing)
    (f"{TEMPORARY_MARK}*", _always),   # tfbert's files before their rename
    (f"encoder/{TEMPORARY_MARK}*", _always),
    (ENCODER_FILE, _not_a_zip),        # the run's end writes it again
)


def _referenced_checkpoints(model_dir: str) -> frozenset[str] | None:
    """The names (`ckpt-N`) of the checkpoints the `checkpoint` index lists; None when it cannot be read."""
    if not os.path.exists(os.path.join(model_dir, CHECKPOINT_INDEX)):
        return frozenset()
    try:
        state = tf.train.get_checkpoint_state(model_dir)
    except (tf.errors.OpError, ValueError):   # damaged: nothing is taken for unreferenced
        return None
    if state is None:
        return None
    paths = [*state.all_model_checkpoint_paths, state.model_checkpoint_path]
    return frozenset(os.path.basename(path) for path in paths if path)


def remove_interrupted_writes(model_dir: str) -> list[str]:
    """Deletes what a killed run left half-written in a local `model_dir` (`INTERRUPTED_WRITES`); returns the
    paths removed."""
    if "://" in model_dir or not os.path.isdir(model_dir):
        return []
    referenced = _referenced_checkpoints(model_dir)
    leftovers = sorted({path for pattern, is_leftover in INTERRUPTED_WRITES
                        for path in glob.glob(os.path.join(glob.escape(model_dir), pattern))
                        if is_leftover(path, referenced)})
    for path in leftovers:
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    return leftovers


def save_run_assets(config: ModelConfig, tokenizer: Tokenizer, model_dir: str, sequence_length: int = 128,
                    max_predictions: int = 20, *, init_from: str | Path | artifacts.Artifact | None = None,
                    precision: PrecisionChoice | None = None) -> None:
    """Writes `config.yaml`, `preprocessor.json`, `tokenizer/` and the manifest `tfbert.json` into `model_dir`
    (local or a bucket such as gs://); the manifest's provenance names `init_from` (path, kind, step), or
    keeps the source a resumed run's manifest names, and records `precision` (`tfbert.training.run_precision`).

    A `model_dir` holding another config or tokenizer is refused before anything is written, and each
    file is written under a temporary name and renamed (`install_run_assets`).
    """
    with tempfile.TemporaryDirectory() as local:
        save_config(config, Path(local) / CONFIG_FILE)
        preprocessor = pretraining_preprocessor(config, tokenizer, sequence_length, max_predictions)
        preprocessor.save(local)
        objectives = config.pretraining.objectives if config.pretraining else None
        write_manifest(local, "pretraining-run", family=config.architecture, config=config.encoder.to_dict(),
                       preprocessor=preprocessor_fields(preprocessor),
                       task={"task": "pretraining", "heads": objectives.split(",") if objectives else None},
                       command="pretrain", precision=precision_record(precision) if precision else None,
                       **_run_source(model_dir, init_from))
        install_run_assets(local, model_dir)


def _run_source(model_dir: str, init_from: str | Path | artifacts.Artifact | None) -> dict:
    """The manifest's source fields: `init_from`'s, else those of the run being resumed in `model_dir`."""
    if init_from is not None:
        return artifacts.source_fields(init_from if isinstance(init_from, artifacts.Artifact)
                                       else artifacts.open(init_from))
    previous = artifacts.read_manifest(model_dir) if "://" not in model_dir else None
    kept = (previous or {}).get("provenance") or {}
    return {name: kept.get(name) for name in ("source", "source_kind", "source_step")}


def record_run_step(model_dir: str) -> None:
    """The run's newest checkpoint step into its manifest's `provenance.step` (local runs; readers of a
    remote or stopped run read it from the checkpoint, `tfbert.artifacts.Artifact.step`)."""
    step = newest_checkpoint_step(model_dir)
    if step is not None:
        record_step(model_dir, step)
