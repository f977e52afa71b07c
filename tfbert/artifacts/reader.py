"""`open(path)`: whatever a tfbert command or a neighbouring library wrote, as one `Artifact`.

Recognised, in this order (the first that fits decides):

| path | kind | source format |
|---|---|---|
| a `.keras` file | `keras` (its family from the model's own config, else the manifest or files beside it) | `tfbert` |
| a folder with `tfbert.json` | the manifest's `kind` | `tfbert` |
| a SavedModel (`saved_model.pb`, or TF Serving's `NAME/VERSION/`) | `export` | `saved-model` |
| a folder written before the manifest: `task.json` + `best.keras`, `config.yaml` + `tokenizer/`, `encoder.keras`, `tokenizer_config.json` naming a tfbert class | `model-dir`, `pretraining-run`, `converted-checkpoint`, `vocab` | `tfbert` |
| a keras-hub preset (`config.json` with `class_name`, `model.weights.h5`) | `keras-hub` | `keras-hub` |
| a Hugging Face folder (`config.json` with `model_type`; sentence-transformers' `modules.json`) | `huggingface` | `huggingface` |
| a Google TF1 release (`*.index`) | `tf1` | `tf1` |
| Hugging Face tokenizer files alone (`vocab.txt`, `spiece.model`, `tokenizer.json`, ...) | `vocab` | `huggingface` |

This module is the only place that looks at file names to tell what a folder is; commands and
Python entry points ask it (`tfbert.artifacts.open`) and then use the `Artifact`'s fields.

Example:
    >>> artifact = open("all-MiniLM-L6-v2/")
    >>> artifact.kind, artifact.source_format, artifact.family
    ('huggingface', 'huggingface', 'bert')
    >>> artifact.preprocessor.packing_style
    'bert'
    >>> artifact.load_encoder().config.hidden_size
    384
"""

from __future__ import annotations

import dataclasses
import json
import zipfile
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfbert import architectures
from tfbert.artifacts.checks import check_tokenizer_fits, inside
from tfbert.artifacts.files import read_preprocessor_settings, read_task_file, read_tokenizer_settings
from tfbert.artifacts.layout import (BEST_MODEL_FILE, CHECKPOINT_INDEX, CONVERTED_MODEL_FILE, ENCODER_FILE,
                                     ENCODER_FILES, HUGGINGFACE_CONFIG_FILE, KERAS_ARCHIVE_CONFIG_FILE, MANIFEST_FILE,
                                     PREPROCESSOR_FILE, RUN_CONFIG_FILE, SAVED_MODEL_EXTRA, TASK_FILE,
                                     TOKENIZER_FOLDER)
from tfbert.artifacts.manifest import read_manifest
from tfbert.artifacts.saved_models import holds_saved_model, resolve_saved_model
from tfbert.artifacts.sentence_transformers import read_sentence_transformers
from tfbert.keras_classes import import_all

if TYPE_CHECKING:
    import keras

    from tfbert.config import ModelConfig
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.models.encoder import Encoder
    from tfbert.text.base import Tokenizer

ACCEPTED = ("a .keras file, a folder tfbert wrote (tfbert.json; vocab, pretraining run, finetune/distill model dir, "
            "converted checkpoint, TF Lite export), a SavedModel from tfbert export, a Hugging Face or sentence-transformers folder "
            "(config.json), a keras-hub preset or a Google TF1 release folder (*.index)")


@dataclasses.dataclass
class Artifact:
    """What `open` found at `path` (see the module notes).

    Attributes:
        path: the path as given.
        kind: `vocab`, `pretraining-run`, `model-dir`, `converted-checkpoint`, `export`, `tflite-export`,
            `keras`, `huggingface`, `tf1` or `keras-hub`.
        source_format: `tfbert`, `saved-model`, `tflite`, `huggingface`, `tf1` or `keras-hub`.
        family: the architecture (`bert`, `roberta`, ...), None where nothing says it.
        config: the encoder config as a dict, None where unknown without loading weights.
        task: `task` (classification, regression, tagging, question_answering, multiple_choice,
            embedding, fill_mask), `labels`, `pooling`, `normalize`, `max_length`; `{}` where none.
        manifest: the `tfbert.json` read, None for folders without one.
        model_file: the `.keras` file holding the model, where there is one.
    """

    path: Path
    kind: str
    source_format: str
    family: str | None = None
    config: dict | None = None
    task: dict = dataclasses.field(default_factory=dict)
    manifest: dict | None = None
    model_file: Path | None = None
    preprocessor_folder: Path | None = None
    tokenizer_folder: Path | None = None

    @cached_property
    def tokenizer(self) -> "Tokenizer | None":
        """The `tfbert.text` tokenizer that goes with the model; None where it has none."""
        # Deferred (start-up): `tfbert.text` imports TensorFlow, kept out of `tfbert --help`
        from tfbert.text import load_tokenizer

        if self.preprocessor_folder is not None:
            return load_tokenizer(self.preprocessor_folder / TOKENIZER_FOLDER)
        if self.tokenizer_folder is not None:
            return load_tokenizer(self.tokenizer_folder)
        if self.kind == "tf1":
            # Deferred (start-up): `tfbert.convert.tf1` imports Keras, kept out of `tfbert --help`
            from tfbert.convert.tf1 import read_release, release_tokenizer

            return release_tokenizer(read_release(self.path))
        if self.kind == "keras-hub":
            # Deferred (start-up): `tfbert.convert.keras_hub` imports Keras, kept out of `tfbert --help`
            from tfbert.convert.keras_hub import preset_tokenizer, read_preset

            return preset_tokenizer(read_preset(self.path))
        return None

    def require_tokenizer(self) -> "Tokenizer":
        """`tokenizer`, or `FileNotFoundError` saying where one was looked for."""
        if self.tokenizer is None:
            raise FileNotFoundError(f"no tokenizer found for {self.path} (a {self.kind}): expected a tfbert tokenizer "
                                    f"folder (tokenizer/ beside the model) or Hugging Face tokenizer files; pass "
                                    f"--tokenizer DIR")
        return self.tokenizer

    @property
    def sequence_length(self) -> int | None:
        """The length the model was trained or fine-tuned with, where the artifact says it."""
        saved = (self.manifest or {}).get("preprocessor") or {}
        if saved.get("sequence_length") or self.task.get("max_length"):
            return saved.get("sequence_length") or self.task.get("max_length")
        if self.preprocessor_folder is not None:
            return read_preprocessor_settings(self.preprocessor_folder)["sequence_length"]
        return None

    @property
    def step(self) -> int | None:
        """The training step its weights come from: a pretraining run's newest checkpoint (read live, so a run
        still training or stopped by a signal says where it is), else the manifest's `provenance.step`."""
        if self.kind == "pretraining-run":
            # Deferred (start-up): `tfbert.artifacts.loading` imports TensorFlow, kept out of `tfbert --help`
            from tfbert.artifacts.loading import newest_checkpoint_step

            newest = newest_checkpoint_step(self.path)
            if newest is not None:
                return newest
        return ((self.manifest or {}).get("provenance") or {}).get("step")

    @property
    def packing_style(self) -> str:
        """`bert` or `roberta`: the saved preprocessor's, else the family's, else the encoder's position layout."""
        saved = (self.manifest or {}).get("preprocessor") or {}
        if saved.get("packing_style"):
            return saved["packing_style"]
        if self.preprocessor_folder is not None:
            return read_preprocessor_settings(self.preprocessor_folder)["packing_style"]
        if self.family is not None:
            return architectures.get(self.family).packing_style
        offset = (self.config or {}).get("position_offset")
        if offset is None:
            offset = self.load_encoder().config.position_offset
        return "roberta" if offset else "bert"

    @property
    def preprocessor(self) -> "Preprocessor":
        """The `Preprocessor` (tokenizer, packing style, length, no masking) that feeds this model."""
        return self.preprocessor_with()

    def preprocessor_with(self, tokenizer: "Tokenizer | None" = None,
                          sequence_length: int | None = None) -> "Preprocessor":
        """`preprocessor` with `tokenizer` and/or `sequence_length` in place of the artifact's."""
        # Deferred (start-up): `tfbert.data.preprocessor` imports TensorFlow, kept out of `tfbert --help`
        from tfbert.data.preprocessor import DEFAULT_SEQUENCE_LENGTH, Preprocessor

        tokenizer = tokenizer if tokenizer is not None else self.require_tokenizer()
        length = sequence_length or self.sequence_length or DEFAULT_SEQUENCE_LENGTH
        return Preprocessor(tokenizer, length, packing_style=self.packing_style, architecture=self.family)

    @property
    def encoder_file(self) -> Path | None:
        """The bare encoder a folder keeps (`encoder.keras`, a run's `encoder/encoder.keras`), None where none."""
        found = [self.path / name for name in ENCODER_FILES if (self.path / name).is_file()]
        return found[0] if found else None

    @property
    def has_checkpoint(self) -> bool:
        """Whether a pretraining run has a complete checkpoint to restore its heads from."""
        # Deferred (start-up): `tfbert.artifacts.loading` imports TensorFlow, kept out of `tfbert --help`
        from tfbert.artifacts.loading import newest_checkpoint_step

        return self.kind == "pretraining-run" and newest_checkpoint_step(self.path) is not None

    def run_config(self) -> "ModelConfig":
        """A pretraining run's `config.yaml` (architecture, encoder, objectives); `ValueError` for other kinds."""
        # Deferred (start-up): `tfbert.config` imports PyYAML, kept out of `tfbert --help`
        from tfbert.config import load_config

        if self.kind != "pretraining-run":
            raise ValueError(f"{self.path} is a {self.kind}, not a pretraining run with a {RUN_CONFIG_FILE}")
        return load_config(str(self.path / RUN_CONFIG_FILE))

    @property
    def language_names(self) -> list[str] | None:
        """The names of the language ids, in id order, where the artifact names them (a Hugging Face XLM folder's
        `lang2id`), else None."""
        if self.kind != "huggingface":
            return None
        lang2id = _read_json(self.path / HUGGINGFACE_CONFIG_FILE).get("lang2id")
        return sorted(lang2id, key=lang2id.get) if isinstance(lang2id, dict) and lang2id else None

    @property
    def hidden_size(self) -> int | None:
        """The encoder's hidden size where the artifact says it without loading weights (its config), else None.

        Example:
            >>> open("all-MiniLM-L6-v2/").hidden_size
            384
        """
        return (self.config or {}).get("hidden_size")

    def with_tokenizer(self, tokenizer: "Tokenizer", scratch: Path) -> "Artifact":
        """This artifact, or, when `tokenizer` extends the vocabulary of the artifact's own (`tfbert vocab add`),
        a `.keras` artifact at `scratch/encoder.keras`: the encoder with its token table grown, each new row
        the mean of the rows of the pieces the word split into before (`tfbert.models.resize.grow_rows`).

        Raises `ValueError` naming both sizes for a tokenizer that is smaller than the artifact's or changes its ids.

        Example:
            >>> from tfbert.text import insert_words, load_tokenizer
            >>> grown = insert_words(load_tokenizer("runs/bert/tokenizer"), ["covid"]).tokenizer   # tfbert vocab add
            >>> open("runs/bert").with_tokenizer(grown, Path(".")).model_file
            PosixPath('encoder.keras')
        """
        # Deferred (start-up): `tfbert.text.vocabulary_growth` imports TensorFlow, kept out of `tfbert --help`
        from tfbert.models.resize import resize_token_embeddings
        from tfbert.text.vocabulary_growth import check_extension, old_pieces_of_added_tokens

        try:
            old = self.tokenizer
        except (OSError, ValueError):
            old = None
        if old is None or old.vocabulary_size() == tokenizer.vocabulary_size():
            check_tokenizer_fits(tokenizer.vocabulary_size(), None, self.config or {}, "the tokenizer", str(self.path))
            return self
        check_extension(old, tokenizer, str(self.path))
        encoder = self.load_encoder()
        if encoder.config.vocab_size != old.vocabulary_size():
            raise ValueError(f"{self.path}: its tokenizer has {old.vocabulary_size()} tokens but its token table "
                             f"{encoder.config.vocab_size} rows; cannot tell which rows the added tokens follow")
        pieces = old_pieces_of_added_tokens(old, tokenizer)
        grown = resize_token_embeddings(encoder, tokenizer.vocabulary_size(), pieces)
        path = scratch / ENCODER_FILE
        grown.save(path)
        return dataclasses.replace(self, path=path, kind="keras", config=grown.config.to_dict(), model_file=path,
                                   preprocessor_folder=None, tokenizer_folder=None)

    def load_model(self, heads: bool = False, dtype: str | None = None) -> "keras.Model":
        """The model itself: the `.keras` model, a run's pretraining model (newest checkpoint), a converted
        checkpoint's encoder (`heads=True`: with the pretraining heads, where the source has them)."""
        if self.model_file is not None:
            return _load_keras(self.model_file)
        if self.kind == "pretraining-run":
            # Deferred (start-up): `tfbert.artifacts.loading` imports TensorFlow, kept out of `tfbert --help`
            from tfbert.artifacts.loading import load_pretraining_run

            return load_pretraining_run(self.path, self.family)
        if self.kind == "huggingface":
            # Deferred (start-up): `tfbert.convert.huggingface` imports Keras, kept out of `tfbert --help`
            from tfbert.convert.huggingface import load_huggingface

            return _with_family(load_huggingface(self.path, heads=heads, dtype=dtype), self.family)
        if self.kind == "tf1":
            # Deferred (start-up): `tfbert.convert.tf1` imports Keras, kept out of `tfbert --help`
            from tfbert.convert.tf1 import read_release

            return _with_family(read_release(self.path).build_model(heads=heads, dtype=dtype), self.family)
        if self.kind == "keras-hub":
            # Deferred (start-up): `tfbert.convert.keras_hub` imports Keras, kept out of `tfbert --help`
            from tfbert.convert.keras_hub import read_preset

            return _with_family(read_preset(self.path).build_encoder(dtype=dtype), self.family)
        raise ValueError(f"{self.path} is a {self.kind}, which holds no model to load; expected {ACCEPTED}")

    def load_encoder(self, dtype: str | None = None) -> "Encoder":
        """The `Encoder` of the model, with its weights and its family recorded (`Encoder.architecture`)."""
        # Deferred (start-up): `tfbert.models.encoder` imports Keras, kept out of `tfbert --help`
        from tfbert.models.encoder import Encoder

        if self.kind == "pretraining-run" and self.encoder_file is not None:
            model = _load_keras(self.encoder_file)   # the encoder the run saved at its end
        else:
            model = self.load_model(dtype=dtype)
        if not isinstance(model, Encoder) and hasattr(model, "embedder") and not hasattr(model, "encoder"):
            model = model.embedder()
        encoder = model if isinstance(model, Encoder) else getattr(model, "encoder", None)
        if not isinstance(encoder, Encoder):
            raise ValueError(f"{self.path} holds a {type(model).__name__} with no tfbert encoder")
        return _with_family(encoder, self.family)


def _with_family(model, family: str | None):
    """Records `family` on the model's encoder, so a `.keras` file saved from it says what it is."""
    # Deferred (start-up): `tfbert.models.encoder` imports Keras, kept out of `tfbert --help`
    from tfbert.models.encoder import Encoder

    encoder = model if isinstance(model, Encoder) else getattr(model, "encoder", None)
    if isinstance(encoder, Encoder) and family and not encoder.architecture:
        encoder.architecture = family
    return model


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"cannot read {path}: {error}") from None


def _load_keras(path: Path) -> "keras.Model":
    import keras

    import_all()
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path} is not a .keras model file (not a zip archive)")
    try:
        return keras.models.load_model(path, compile=False)
    except (ValueError, OSError, KeyError, TypeError, zipfile.BadZipFile) as error:
        # Keras' own errors (a JSON error in the archive's config.json, h5py's "Unable to synchronously open file"
        # for damaged weights) name no file.
        first_line = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
        raise ValueError(f"{path} is not a Keras model tfbert can load ({first_line[:160]}); write it again with "
                         "the command that made it") from None


def _tokenizer_near(folder: Path) -> Path | None:
    """A tfbert tokenizer folder in or beside `folder` (up to two levels above, where old runs keep it),
    else `folder` itself where it holds Hugging Face tokenizer files."""
    # Deferred (start-up): `tfbert.text.huggingface_folders` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.text.huggingface_folders import is_huggingface_tokenizer
    from tfbert.text.loading import is_tfbert_tokenizer

    for candidate in (folder, folder / TOKENIZER_FOLDER, folder.parent / TOKENIZER_FOLDER,
                      folder.parent.parent / TOKENIZER_FOLDER):
        if is_tfbert_tokenizer(candidate):
            return candidate
    return folder if is_huggingface_tokenizer(folder) else None


def _preprocessor_near(folder: Path) -> Path | None:
    """The folder whose `preprocessor.json` goes with `folder`: it, or up to two levels above."""
    for candidate in (folder, folder.parent, folder.parent.parent):
        if (candidate / PREPROCESSOR_FILE).is_file():
            return candidate
    return None


def _legacy_family(folder: Path) -> str | None:
    """The family the files around an old folder name: `preprocessor.json`, `config.yaml`, `config.json`."""
    saved = _preprocessor_near(folder)
    if saved is not None and read_preprocessor_settings(saved).get("architecture"):
        return read_preprocessor_settings(saved)["architecture"]
    for candidate in (folder, folder.parent, folder.parent.parent):
        if (candidate / RUN_CONFIG_FILE).is_file():
            # Deferred (start-up): `tfbert.config` imports PyYAML, kept out of `tfbert --help`
            from tfbert.config import load_config

            return load_config(str(candidate / RUN_CONFIG_FILE)).architecture
    return _huggingface_family(folder) if (folder / HUGGINGFACE_CONFIG_FILE).is_file() else None


def _huggingface_family(folder: Path) -> str | None:
    try:
        model_type = _read_json(folder / HUGGINGFACE_CONFIG_FILE).get("model_type")
        return architectures.with_format("huggingface", model_type).name
    except (ValueError, AttributeError, KeyError):
        return None


def _model_config_of(model) -> tuple[str | None, dict | None]:
    # Deferred (start-up): `tfbert.models.encoder` imports Keras, kept out of `tfbert --help`
    from tfbert.config import ModelConfig
    from tfbert.models.encoder import Encoder

    config = getattr(model, "config", None)
    if isinstance(config, ModelConfig):
        return config.architecture, config.encoder.to_dict()
    encoder = model if isinstance(model, Encoder) else getattr(model, "encoder", None)
    if isinstance(encoder, Encoder):
        return encoder.architecture, encoder.config.to_dict()
    return None, None


def keras_file_summary(path: str | Path) -> tuple[str | None, dict | None]:
    """The family and encoder config a tfbert `.keras` file records (its encoder's `architecture` and `config`,
    or a pretraining model's config), read from the archive's `config.json` without building the model."""
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read(KERAS_ARCHIVE_CONFIG_FILE).decode("utf-8"))
    except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError):
        return None, None
    return _find_encoder(data)


def _find_encoder(node: Any) -> tuple[str | None, dict | None]:
    """Depth first: the first `Encoder`'s (`architecture`, `config`), or a `ModelConfig`-shaped mapping's."""
    if isinstance(node, dict):
        inner = node.get("config")
        if node.get("class_name") == "Encoder" and isinstance(inner, dict):
            return inner.get("architecture"), inner.get("config")
        encoder = node.get("encoder")
        if isinstance(encoder, dict) and "vocab_size" in encoder:   # a task model's or a ModelConfig's encoder
            family = node.get("architecture")
            return family if isinstance(family, str) else None, encoder
        children = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None, None
    for child in children:
        found = _find_encoder(child)
        if found != (None, None):
            return found
    return None, None


def _keras_family(path: Path) -> str | None:
    return keras_file_summary(path)[0]


def _describes(manifest: dict | None, path: Path) -> bool:
    """Whether the folder's manifest is about the `.keras` file `path` (a folder may hold several converted files)."""
    if manifest is None:
        return False
    model_file = (manifest.get("provenance") or {}).get("model_file")
    return model_file is None or model_file == path.name


def _keras_file(path: Path) -> Artifact:
    folder = path.parent
    manifest = read_manifest(folder)
    from_manifest = _from_manifest(folder, manifest) if _describes(manifest, path) else None
    task = dict(from_manifest.task) if from_manifest else {}
    if not task and (folder / TASK_FILE).is_file():
        task = read_task_file(folder)
        task.setdefault("labels", task.get("label_names"))
    recorded_family, config = keras_file_summary(path)
    family = recorded_family or (from_manifest.family if from_manifest else _legacy_family(folder))
    return Artifact(path, "keras", "tfbert", family, config or (from_manifest.config if from_manifest else None),
                    task, manifest if from_manifest else None, path, _preprocessor_near(folder),
                    _tokenizer_near(folder))


def _from_manifest(folder: Path, manifest: dict) -> Artifact:
    kind = manifest["kind"]
    task = dict(manifest.get("task") or {})
    model_file = None
    if kind == "model-dir":
        model_file = folder / BEST_MODEL_FILE
    elif kind == "converted-checkpoint":
        model_file = inside(folder, (manifest.get("provenance") or {}).get("model_file") or CONVERTED_MODEL_FILE,
                            folder / MANIFEST_FILE, "provenance.model_file")
    if kind == "export":
        return Artifact(folder, kind, "saved-model", manifest.get("family"), manifest.get("config"), task, manifest)
    if kind == "vocab":
        return Artifact(folder, kind, "tfbert", manifest.get("family"), None, task, manifest, tokenizer_folder=folder)
    saved = folder if (folder / PREPROCESSOR_FILE).is_file() else None
    # A preprocessor.json written after the manifest (finetune saves it last) may know the family the manifest lacks.
    family = manifest.get("family") or (_legacy_family(folder) if saved is not None else None)
    return Artifact(folder, kind, "tflite" if kind == "tflite-export" else "tfbert", family, manifest.get("config"), task, manifest, model_file, saved,
                    _tokenizer_near(folder))


def _saved_model(path: Path) -> Artifact:
    version = resolve_saved_model(path)
    extra = version / SAVED_MODEL_EXTRA
    manifest = read_manifest(extra)
    if manifest is not None:
        artifact = _from_manifest(version, manifest)
        artifact.path = path
        return artifact
    return Artifact(path, "export", "saved-model",
                    _legacy_family(extra) if (extra / PREPROCESSOR_FILE).is_file() else None)


def _legacy_folder(path: Path) -> Artifact | None:
    """A folder a tfbert command wrote before the manifest, or None where it is not one."""
    # Deferred (start-up): `tfbert.text.loading` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.text.loading import is_tfbert_tokenizer

    if (path / TASK_FILE).is_file() and (path / BEST_MODEL_FILE).is_file():
        task = read_task_file(path)
        task.setdefault("labels", task.get("label_names"))
        return Artifact(path, "model-dir", "tfbert", _keras_family(path / BEST_MODEL_FILE) or _legacy_family(path),
                        None, task, None, path / BEST_MODEL_FILE, _preprocessor_near(path), _tokenizer_near(path))
    if (path / RUN_CONFIG_FILE).is_file() and (path / TOKENIZER_FOLDER).is_dir():
        # Deferred (start-up): `tfbert.config` imports PyYAML, kept out of `tfbert --help`
        from tfbert.config import load_config

        config = load_config(str(path / RUN_CONFIG_FILE))
        return Artifact(path, "pretraining-run", "tfbert", config.architecture, config.encoder.to_dict(),
                        {"task": "fill_mask"}, None, None, _preprocessor_near(path), path / TOKENIZER_FOLDER)
    for name in ENCODER_FILES:
        if (path / name).is_file():
            return Artifact(path, "converted-checkpoint", "tfbert",
                            _keras_family(path / name) or _legacy_family(path), None, {}, None, path / name,
                            _preprocessor_near(path), _tokenizer_near(path))
    if is_tfbert_tokenizer(path):
        return Artifact(path, "vocab", "tfbert", None, None, {}, None, tokenizer_folder=path)
    return None


def _foreign_folder(path: Path) -> Artifact | None:
    """A keras-hub preset, a Hugging Face (or sentence-transformers) folder or a TF1 release; None otherwise."""
    if (path / HUGGINGFACE_CONFIG_FILE).is_file():
        data = _read_json(path / HUGGINGFACE_CONFIG_FILE)
        if isinstance(data, dict) and "class_name" in data and isinstance(data.get("config"), dict):
            return _keras_hub_preset(path)
        return _huggingface_folder(path)
    if list(path.glob("*.index")) or list(path.glob("*/*.index")):
        return _tf1_release(path)
    # Deferred (start-up): `tfbert.text.huggingface_folders` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.text.huggingface_folders import is_huggingface_tokenizer

    if is_huggingface_tokenizer(path):   # tokenizer files alone (vocab.txt, spiece.model, tokenizer.json, ...)
        return Artifact(path, "vocab", "huggingface", tokenizer_folder=path)
    return None


def _keras_hub_preset(path: Path) -> Artifact:
    # Deferred (start-up): `tfbert.convert.keras_hub` imports Keras, kept out of `tfbert --help`
    from tfbert.convert.keras_hub import read_preset

    preset = read_preset(path)
    return Artifact(path, "keras-hub", "keras-hub", preset.spec.name, preset.config.encoder.to_dict())


def _tf1_release(path: Path) -> Artifact:
    # Deferred (start-up): `tfbert.convert.tf1` imports Keras, kept out of `tfbert --help`
    from tfbert.convert.tf1 import read_release

    release = read_release(path)
    return Artifact(path, "tf1", "tf1", release.spec.name, release.config.encoder.to_dict())


def _huggingface_folder(path: Path) -> Artifact:
    # Deferred (start-up): `tfbert.text.huggingface_folders` imports TensorFlow, kept out of `tfbert --help`
    from tfbert.convert.huggingface import read_folder_config
    from tfbert.text.huggingface_folders import is_huggingface_tokenizer

    config = read_folder_config(path)
    layout = read_sentence_transformers(path)
    task = {}
    if layout is not None:
        task = {"task": "embedding", "pooling": layout.pooling, "normalize": layout.normalize,
                "max_length": layout.max_seq_length}
    return Artifact(path, "huggingface", "huggingface", config.architecture, config.encoder.to_dict(), task,
                    tokenizer_folder=path if is_huggingface_tokenizer(path) else None)


def is_model_dir(path: str | Path) -> bool:
    """Whether `path` is a folder `tfbert finetune` or `distill` wrote (`task.json` and `best.keras`)."""
    path = Path(path)
    return path.is_dir() and (path / TASK_FILE).is_file() and (path / BEST_MODEL_FILE).is_file()


def read_task(source: str | Path) -> dict:
    """`task.json` of a model dir, or of the folder holding a `.keras` file, checked; `{}` where there is none.

    Example:
        >>> read_task("runs/sst2")["task"]
        'classification'
    """
    path = Path(source)
    return read_task_file(path if path.is_dir() else path.parent)


def model_file(source: str | Path) -> Path:
    """`source/best.keras` for a model dir, else `source` itself.

    Example:
        >>> model_file("runs/sst2")
        PosixPath('runs/sst2/best.keras')
    """
    path = Path(source)
    return path / BEST_MODEL_FILE if is_model_dir(path) else path


def folder_kind(path: str | Path) -> str | None:
    """What a folder tfbert wrote is, without loading anything: its manifest's `kind`; for a folder written
    before the manifest, `pretraining-run` where it has a run's files (`config.yaml` or a checkpoint index)
    and no `task.json`; else None (not a tfbert folder). A damaged manifest, or one a newer tfbert wrote, raises
    its one-line `FileContentError` (`NewerManifest`), so a command says what the folder is instead of calling it
    "not a run" and offering `--overwrite`.

    Example:
        >>> folder_kind("runs/bert")
        'pretraining-run'
    """
    path = Path(path)
    if not path.is_dir():
        return None
    manifest = read_manifest(path)
    if manifest is not None:
        return manifest["kind"]
    legacy_run = (path / RUN_CONFIG_FILE).is_file() or (path / CHECKPOINT_INDEX).is_file()
    return "pretraining-run" if legacy_run and not (path / TASK_FILE).exists() else None


def open_as(path: str | Path, kind: str) -> Artifact:
    """`path` read as a `huggingface`, `tf1` or `keras-hub` folder, where the caller knows which it is (`tfbert
    convert KIND`): the format's own reader then says what is missing or wrong.

    Example:
        >>> open_as("uncased_L-12_H-768_A-12/", "tf1").family   # a Google release (not in the test assets)  # doctest: +SKIP
        'bert'
    """
    readers = {"huggingface": _huggingface_folder, "tf1": _tf1_release, "keras-hub": _keras_hub_preset}
    if kind not in readers:
        raise ValueError(f"open_as reads {', '.join(readers)}, not {kind!r}; use open(path) for the others")
    return readers[kind](Path(path))


def open(path: str | Path) -> Artifact:  # noqa: A001  (tfbert.artifacts.open, as the module's one verb)
    """The `Artifact` at `path` (see the module notes); `FileNotFoundError` or `ValueError` naming what it accepts.

    Example:
        >>> open("runs/sst2").task["labels"]
        ['negative', 'positive']
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder; expected {ACCEPTED}")
    if path.is_file():
        if path.suffix == ".keras":
            return _checked(_keras_file(path))
        raise ValueError(f"{path} is a file but not a .keras model; expected {ACCEPTED}")
    manifest = read_manifest(path)
    if manifest is not None:
        return _checked(_from_manifest(path, manifest))
    if holds_saved_model(path):
        return _saved_model(path)
    found = _legacy_folder(path) or _foreign_folder(path)
    if found is None:
        listing = ", ".join(sorted(entry.name for entry in path.iterdir())[:8]) or "an empty folder"
        raise ValueError(f"{path} is none of the kinds tfbert reads ({ACCEPTED}); found {listing}")
    return _checked(found)


def _checked(artifact: Artifact) -> Artifact:
    """`artifact`, once the JSON files tfbert wrote beside its model are read and checked (`preprocessor.json`,
    `task.json`, the tokenizer's `tokenizer_config.json`), so a damaged one is refused before anything is loaded."""
    if artifact.source_format not in ("tfbert", "tflite"):
        return artifact
    if artifact.preprocessor_folder is not None:
        read_preprocessor_settings(artifact.preprocessor_folder)
    read_task_file(artifact.path if artifact.path.is_dir() else artifact.path.parent)
    for folder in (artifact.tokenizer_folder,
                   artifact.preprocessor_folder / TOKENIZER_FOLDER if artifact.preprocessor_folder else None):
        if folder is not None:
            read_tokenizer_settings(folder)
    return artifact


__all__ = ["ACCEPTED", "Artifact", "MANIFEST_FILE", "folder_kind", "is_model_dir", "model_file", "open", "open_as",
           "read_task"]
