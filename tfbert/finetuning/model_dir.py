"""The folder `tfbert finetune` and `tfbert distill` write: `best.keras`, `best.json`, `tokenizer/`, `task.json`.

`task.json` says what the model is (`"task"`: classification, regression or embedding) and how to
feed it (`max_length`, `pair`, and for embeddings `pooling` and `normalize`), so export, evaluate
and augment need no flags to use the folder. Reading the folder back is `tfbert.artifacts`' job
(`tfbert.artifacts.open`, `tfbert.artifacts.read_task`).

Example:
    >>> from tfbert import artifacts
    >>> artifacts.read_task("runs/sst2")["label_names"]   # what `write_task` wrote at the end of tfbert finetune
    ['negative', 'positive']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from tfbert import artifacts
from tfbert.artifacts.layout import BEST_MODEL_FILE, TASK_FILE
from tfbert.artifacts.reader import keras_file_summary

if TYPE_CHECKING:
    from tfbert.artifacts import Artifact
    from tfbert.data.preprocessor import Preprocessor


def write_task(model_dir: str | Path, task: dict, source: "Artifact | None" = None,
               preprocessor: "Preprocessor | None" = None) -> None:
    """Writes `task.json` and the manifest `tfbert.json` (`write_model_dir_manifest`)."""
    (Path(model_dir) / TASK_FILE).write_text(json.dumps(task, indent=2), encoding="utf-8")
    write_model_dir_manifest(model_dir, source, preprocessor)


def write_model_dir_manifest(model_dir: str | Path, source: "Artifact | None" = None,
                             preprocessor: "Preprocessor | None" = None) -> Path:
    """`tfbert.json` of a model dir, from what the folder holds: the family and encoder config recorded in
    `best.keras`, the `preprocessor` (packing, length; else the folder's `preprocessor.json` or `tokenizer/`)
    and `task.json` (labels as `labels`); its provenance names `source` (the opened `--pretrained` or
    `--student` model: path, kind and step)."""
    model_dir = Path(model_dir)
    task = artifacts.read_task(model_dir)
    task["labels"] = task.get("label_names")
    family, config = keras_file_summary(model_dir / BEST_MODEL_FILE)
    if preprocessor is None:
        written = artifacts.open(model_dir / BEST_MODEL_FILE)
        family = family or written.family
        if written.tokenizer_folder is not None or written.preprocessor_folder is not None:
            preprocessor = written.preprocessor_with(sequence_length=task.get("max_length"))
    family = family or getattr(preprocessor, "architecture", None)
    return artifacts.write_manifest(model_dir, "model-dir", family=family, config=config,
                                    preprocessor=artifacts.preprocessor_fields(preprocessor), task=task,
                                    command=task.get("command"), **artifacts.source_fields(source))
