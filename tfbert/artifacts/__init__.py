"""What passes between tfbert commands: one manifest (`tfbert.json`) written by every writer, one reader.

- `write_manifest(folder, kind, ...)` / `read_manifest(folder)`: the versioned manifest (`tfbert.artifacts.manifest`).
- `open(path)`: any tfbert folder or `.keras` file, a SavedModel from `tfbert export`, a Hugging Face or
  sentence-transformers folder, a TF1 release or a keras-hub preset, as an `Artifact` with its kind,
  family, config, `preprocessor`, task, `load_model()` and `load_encoder()` (`tfbert.artifacts.reader`).
- `folder_kind(path)`: a folder's kind without loading it (the manifest's, or an old run's files); what
  `tfbert.outputs.run_kind` asks before resuming a run.
- `read_task(path)`, `is_model_dir(path)`, `model_file(path)`: a finetune / distill model dir's `task.json` and model.
- `tfbert.artifacts.layout`: the file names of every folder; `tfbert.artifacts.files`: each file checked before use.
- `resolve_saved_model(path)`: the version folder of an export that every loader uses (`tfbert.artifacts.saved_models`).

Importing this package imports neither TensorFlow nor Keras; loading a model does.

Example:
    >>> import tfbert
    >>> artifact = tfbert.artifacts.open("runs/sst2")
    >>> artifact.kind, artifact.task["labels"]
    ('model-dir', ['negative', 'positive'])
"""

from tfbert.artifacts.checks import FileContentError
from tfbert.artifacts.layout import MANIFEST_FILE
from tfbert.artifacts.manifest import (EXPORT_KINDS, FORMAT_VERSION, KINDS, NewerManifest, preprocessor_fields,
                                       read_manifest, record_step, source_fields, write_manifest)
from tfbert.artifacts.reader import (ACCEPTED, Artifact, folder_kind, is_model_dir, model_file, open,  # noqa: A004
                                     open_as, read_task)
from tfbert.artifacts.saved_models import is_saved_model, resolve_saved_model, saved_model_versions

__all__ = ["ACCEPTED", "Artifact", "EXPORT_KINDS", "FORMAT_VERSION", "FileContentError", "KINDS", "MANIFEST_FILE",
           "NewerManifest", "folder_kind", "is_model_dir", "is_saved_model", "model_file", "open", "open_as",
           "preprocessor_fields", "read_manifest", "read_task", "record_step", "resolve_saved_model",
           "saved_model_versions", "source_fields", "write_manifest"]
