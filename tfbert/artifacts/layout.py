"""The names of the files and folders tfbert writes and reads: the one module that spells them.

Every other module imports the name it needs from here (`tests/test_artifact_layout.py` checks that no
other module spells one), so renaming a file of the layout is one edit. This module imports nothing, so
any layer may import it.

| folder | files |
|---|---|
| any folder tfbert writes | `tfbert.json` (the manifest) |
| a tokenizer (`tfbert vocab`, and `tokenizer/` beside every model) | `tokenizer_config.json` and the vocabulary |
| a pretraining run | `config.yaml`, `preprocessor.json`, `tokenizer/`, `checkpoint`, `ckpt-N.*`, `encoder/` |
| a model dir (`finetune`, `distill`) | `best.keras`, `best.json`, `task.json`, `preprocessor.json`, `tokenizer/` |
| a converted checkpoint | `OUT.keras` (default `model.keras`), `tokenizer/` |
| an export (SavedModel) | `NAME/VERSION/assets.extra/`: `tfbert_export.json`, `preprocessor.json`, `tokenizer/` |
| a TF Lite export | `NAME/model.tflite`, `tfbert_export.json`, `preprocessor.json`, `tokenizer/` |
| a Hugging Face folder | `config.json`, `tokenizer.json`, `tokenizer_config.json`, ... |
| a keras-hub preset | `config.json`, `tokenizer.json`, `model.weights.h5` |

Example:
    >>> from pathlib import Path
    >>> Path("runs/sst2") / BEST_MODEL_FILE
    PosixPath('runs/sst2/best.keras')
"""

MANIFEST_FILE = "tfbert.json"
TOKENIZER_FOLDER = "tokenizer"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"   # a tfbert tokenizer folder's, and Hugging Face's
PREPROCESSOR_FILE = "preprocessor.json"

RUN_CONFIG_FILE = "config.yaml"
CHECKPOINT_INDEX = "checkpoint"   # TensorFlow's index of the complete checkpoints in a folder
ENCODER_FOLDER = "encoder"
ENCODER_FILE = "encoder.keras"
RUN_ENCODER_FILE = f"{ENCODER_FOLDER}/{ENCODER_FILE}"   # a pretraining run's encoder, written at its end
ENCODER_FILES = (ENCODER_FILE, RUN_ENCODER_FILE)   # where a folder keeps a bare encoder

TASK_FILE = "task.json"
BEST_MODEL_FILE = "best.keras"
BEST_SCORES_FILE = "best.json"

CONVERTED_MODEL_FILE = "model.keras"   # a converted checkpoint's default file name

EXPORT_METADATA_FILE = "tfbert_export.json"
SAVED_MODEL_EXTRA = "assets.extra"   # a SavedModel's folder for files TF Serving ignores
TFLITE_MODEL_FILE = "model.tflite"

HUGGINGFACE_CONFIG_FILE = "config.json"
HUGGINGFACE_TOKENIZER_FILE = "tokenizer.json"
SENTENCE_TRANSFORMERS_MODULE_CONFIG_FILE = "config.json"   # a module folder's, e.g. 1_Pooling/config.json
KERAS_HUB_CONFIG_FILE = "config.json"
KERAS_ARCHIVE_CONFIG_FILE = "config.json"   # inside a `.keras` file (a zip archive)
KERAS_HUB_TOKENIZER_FILE = "tokenizer.json"
