"""A run directory's assets (`config.yaml`, `preprocessor.json`, `tokenizer/`), never half-written.

`install_run_assets` compares what a run is about to write with what its `--model-dir` already
holds and refuses a rerun with another config or tokenizer *before* anything is written (the
checkpoints would not fit them). New files are written under a temporary name in the same folder
and renamed, so a kill leaves the old file or the new one, never a mix. `remove_interrupted_writes`
deletes what a killed run left half-written: TensorFlow's `ckpt-N_temp/` folders, these temporary
names, and an `encoder.keras` that is not a complete file.

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
import shutil
import zipfile
from pathlib import Path

import tensorflow as tf
import yaml

from tfbert.outputs import CHECKPOINT_INDEX, TEMPORARY_MARK, temporary_name

CONFIG_FILE = "config.yaml"
TOKENIZER_FOLDER = "tokenizer"
ENCODER_FILE = os.path.join("encoder", "encoder.keras")


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


def remove_interrupted_writes(model_dir: str) -> list[str]:
    """Deletes what a killed run left half-written in a local `model_dir`; returns the paths removed."""
    if "://" in model_dir or not os.path.isdir(model_dir):
        return []
    leftovers = [*glob.glob(os.path.join(model_dir, "ckpt-*_temp")),
                 *glob.glob(os.path.join(model_dir, f"{TEMPORARY_MARK}*")),
                 *glob.glob(os.path.join(model_dir, "encoder", f"{TEMPORARY_MARK}*"))]
    encoder = os.path.join(model_dir, ENCODER_FILE)
    if os.path.isfile(encoder) and not zipfile.is_zipfile(encoder):
        leftovers.append(encoder)   # a 0-byte or cut-off file; the run's end writes it again
    for path in leftovers:
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    return leftovers
