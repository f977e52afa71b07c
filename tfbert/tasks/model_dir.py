"""The folder `tfbert finetune` and `tfbert distill` write: `best.keras`, `best.json`, `tokenizer/`, `task.json`.

`task.json` says what the model is (`"task"`: classification, regression or embedding) and how to
feed it (`max_length`, `pair`, and for embeddings `pooling` and `normalize`), so export, evaluate
and augment need no flags to use the folder.

Example:
    >>> model_file("runs/sst2")            # a model dir: its best epoch
    PosixPath('runs/sst2/best.keras')
    >>> read_task("runs/sst2")["task"]
    'classification'
"""

from __future__ import annotations

import json
from pathlib import Path

TASK_FILE = "task.json"
BEST_MODEL_FILE = "best.keras"
TOKENIZER_FOLDER = "tokenizer"


def is_model_dir(path: str | Path) -> bool:
    """Whether `path` is a folder with `task.json` and `best.keras`."""
    path = Path(path)
    return path.is_dir() and (path / TASK_FILE).is_file() and (path / BEST_MODEL_FILE).is_file()


def read_task(source: str | Path) -> dict:
    """`task.json` of a model dir, or of the folder holding a `.keras` file; `{}` where there is none."""
    path = Path(source)
    task_file = (path if path.is_dir() else path.parent) / TASK_FILE
    return json.loads(task_file.read_text(encoding="utf-8")) if task_file.is_file() else {}


def write_task(model_dir: str | Path, task: dict, source: str | Path | None = None) -> None:
    """Writes `task.json` and the manifest `tfbert.json` (`write_model_dir_manifest`)."""
    (Path(model_dir) / TASK_FILE).write_text(json.dumps(task, indent=2), encoding="utf-8")
    write_model_dir_manifest(model_dir, source)


def write_model_dir_manifest(model_dir: str | Path, source: str | Path | None = None) -> Path:
    """`tfbert.json` of a model dir, from what the folder holds: the family and encoder config recorded in
    `best.keras`, `preprocessor.json` (packing, length) or `tokenizer/`, and `task.json` (labels as `labels`);
    its provenance names `source` (the `--pretrained` or `--student` model: path, kind and step)."""
    from tfbert.artifacts import open as open_artifact
    from tfbert.artifacts import source_fields, write_manifest
    from tfbert.artifacts.reader import keras_file_summary

    model_dir = Path(model_dir)
    task = read_task(model_dir)
    task["labels"] = task.get("label_names")
    family, config = keras_file_summary(model_dir / BEST_MODEL_FILE)
    artifact = open_artifact(model_dir / BEST_MODEL_FILE)
    preprocessor = None
    if artifact.tokenizer_folder is not None or artifact.preprocessor_folder is not None:
        from tfbert.artifacts import preprocessor_fields

        preprocessor = preprocessor_fields(artifact.preprocessor_with(sequence_length=task.get("max_length")))
    return write_manifest(model_dir, "model-dir", family=family or artifact.family, config=config,
                          preprocessor=preprocessor, task=task, command=task.get("command"),
                          **source_fields(open_artifact(source) if source is not None else None))


def model_file(source: str | Path) -> Path:
    """`source/best.keras` for a model dir, else `source` itself."""
    path = Path(source)
    return path / BEST_MODEL_FILE if is_model_dir(path) else path
