"""Write a converted model and its tokenizer so that neither appears half-written.

Each is written under a temporary name in the output's folder and renamed into place when
complete: first the tokenizer folder (`tokenizer/` beside the `.keras` file, where
`tfbert.artifacts.open` looks), then the `.keras` file. On any
failure the temporary files are removed and nothing is left at the output names.

Example:
    >>> from tfbert.finetuning.pretrained import load_pretrained_encoder, load_pretrained_tokenizer
    >>> model, tokenizer = load_pretrained_encoder("runs/bert"), load_pretrained_tokenizer("runs/bert")
    >>> save_converted(model, Path("bert/model.keras"), tokenizer)   # writes bert/model.keras too
    PosixPath('bert/tokenizer')
"""

from __future__ import annotations

import filecmp
import os
import shutil
import tempfile
from pathlib import Path

import keras

from tfbert.artifacts.layout import TOKENIZER_FOLDER
from tfbert.outputs import final_name, replace


def _same_files(left: Path, right: Path) -> bool:
    comparison = filecmp.dircmp(left, right)
    if comparison.left_only or comparison.right_only or comparison.funny_files:
        return False
    return filecmp.cmpfiles(left, right, comparison.common_files, shallow=False)[0] == sorted(comparison.common_files)


def _place_tokenizer(written: Path, target: Path, output: Path, replace_tokenizer: bool = False) -> None:
    """Renames the complete tokenizer folder `written` to `target`; an equal one already there is kept, another
    one is replaced only with `replace_tokenizer`."""
    if target.exists():
        if target.is_dir() and _same_files(written, target):
            shutil.rmtree(written)
            return
        if not replace_tokenizer:
            name = final_name(output)
            raise FileExistsError(f"{target} already holds another tokenizer; write {name} into a folder of "
                                  f"its own (e.g. -o NEW_FOLDER/{name}), or add --overwrite to replace it")
    replace(written, target)


def save_converted(model: keras.Model, output: str | Path, tokenizer=None,
                   replace_tokenizer: bool = False) -> Path | None:
    """Saves `model` to `output` (a `.keras` path) and `tokenizer` to `output`'s folder / `tokenizer`.

    Returns the tokenizer folder (None without a tokenizer). Raises `FileExistsError` when that
    folder holds a different tokenizer (the model would be paired with the wrong one) unless
    `replace_tokenizer`; nothing is written then. An existing `output` file is replaced.
    """
    output = Path(output)
    folder = output.parent
    folder.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{output.name}.partial-", dir=folder))
    try:
        target = None
        if tokenizer is not None:
            target = folder / TOKENIZER_FOLDER
            tokenizer.save_assets(scratch / TOKENIZER_FOLDER)
            if target.exists() and not replace_tokenizer:
                _place_tokenizer(scratch / TOKENIZER_FOLDER, target, output)
        model.save(scratch / output.name)
        if target is not None and (scratch / TOKENIZER_FOLDER).exists():
            _place_tokenizer(scratch / TOKENIZER_FOLDER, target, output, replace_tokenizer)
        os.replace(scratch / output.name, output)
        return target
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
