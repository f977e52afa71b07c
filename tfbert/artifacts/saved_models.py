"""Which folder of a `tfbert export` output is the SavedModel: the one resolver of TF Serving's `NAME/VERSION/`.

`tfbert export --name NAME` writes `saved_models/NAME/1/`, `2/`, ... and TF Serving serves the
highest version; `tfbert predict`, `tfbert.artifacts.open`, `load_text_embedder` and
`load_cross_encoder` accept either the version folder or `NAME/` and load the version this module
picks, so they agree with TF Serving and with each other. Folders that are not all digits (an
export still being written under a temporary name) are no version.

Example:
    >>> resolve_saved_model("saved_models/sst2")   # the highest version
    PosixPath('saved_models/sst2/1')
"""

from __future__ import annotations

import os
from pathlib import Path

SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")
EXPECTED = "give the folder that tfbert export wrote (saved_models/NAME/VERSION or saved_models/NAME)"


def is_saved_model(folder: str | os.PathLike) -> bool:
    """Whether `folder` itself holds a SavedModel (`saved_model.pb` or `.pbtxt`)."""
    return any((Path(folder) / name).is_file() for name in SAVED_MODEL_FILES)


def saved_model_versions(root: str | os.PathLike) -> list[Path]:
    """The numeric version folders under `root` that hold a SavedModel, lowest version first."""
    root = Path(root)
    if not root.is_dir():
        return []
    versions = [child for child in root.iterdir() if child.name.isdigit() and is_saved_model(child)]
    return sorted(versions, key=lambda child: int(child.name))


def next_version_number(root: str | os.PathLike) -> int:
    """One more than the highest numeric folder under `root`, complete or not (1 for none), so an export
    never reuses a version number."""
    root = Path(root)
    numbers = [int(child.name) for child in root.iterdir() if child.name.isdigit()] if root.is_dir() else []
    return max(numbers, default=0) + 1


def holds_saved_model(path: str | os.PathLike) -> bool:
    """Whether `resolve_saved_model(path)` finds one: `path` is a SavedModel or has a version folder."""
    return is_saved_model(path) or bool(saved_model_versions(path))


def resolve_saved_model(path: str | os.PathLike) -> Path:
    """`path` if it is a SavedModel, else its highest version folder (the one TF Serving serves);
    `FileNotFoundError` for a missing path, `ValueError` for a file or a folder with neither."""
    folder = Path(path)
    if not folder.exists():
        raise FileNotFoundError(f"SavedModel folder {str(folder)!r} does not exist")
    if not folder.is_dir():
        raise ValueError(f"{str(folder)!r} is a file; {EXPECTED}")
    if is_saved_model(folder):
        return folder
    versions = saved_model_versions(folder)
    if not versions:
        raise ValueError(f"{str(folder)!r} is not a SavedModel (no saved_model.pb in it or in a version folder); "
                         f"{EXPECTED}")
    return versions[-1]
