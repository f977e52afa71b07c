"""Load Google's original TensorFlow 1 releases (BERT and the small BERTs, ALBERT v1/v2, ELECTRA) into tfbert models.

A release folder holds one checkpoint (`bert_model.ckpt.index` + `bert_model.ckpt.data-*`,
`model.ckpt-best.*`, any other prefix, or a TF-Hub module's `variables/variables.*`), the
family's JSON config (`bert_config.json`, `albert_config.json`; ELECTRA's sizes follow from
its shapes unless an `hparams.json` is there) and the vocabulary (`vocab.txt` or a
SentencePiece `*.model`, beside the checkpoint or in `assets/`). The checkpoint is read with
`tf.train.load_checkpoint`, one variable at a time. The family is the registered architecture
whose `tf1` format (`tfbert.architectures`) has its `marker` variable in the checkpoint; that
format reads the config and names every weight in the original code's names.

Example:
    >>> from tfbert.convert.tf1 import load_tf1, read_release, release_tokenizer
    >>> encoder = load_tf1("uncased_L-12_H-768_A-12/")                  # Encoder (Google releases: not in the test assets)  # doctest: +SKIP
    >>> pretrainer = load_tf1("albert_base/", heads=True)                # PretrainingModel (MLM + SOP)  # doctest: +SKIP
    >>> release = read_release("electra_small/")  # doctest: +SKIP
    >>> model, tokenizer = release.build_model(heads=True), release_tokenizer(release)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path
from typing import Any, Iterator, Mapping

import keras
import numpy as np

from tfbert import architectures
from tfbert.architectures import ArchitectureSpec
from tfbert.config import EncoderConfig, ModelConfig
from tfbert.convert import weights
from tfbert.models.encoder import Encoder

FORMAT = "tf1"
# Variables a release may hold that no tfbert weight comes from: the step and optimizer slots
# (BERT's AdamWeightDecay and ALBERT's LAMB name theirs `<variable>/adam_m`, `/adam_v`).
IGNORED_NAMES = ("global_step",)
IGNORED_SUFFIXES = ("/adam_m", "/adam_v", "/lamb_m", "/lamb_v")
# Where a release keeps its files: beside the checkpoint, or in a TF-Hub module's variables/ and assets/.
SUBFOLDERS = ("", "variables", "assets")
# The vocabulary file of each tokenizer kind (`ArchitectureSpec.tokenizer`), as a glob.
VOCABULARY_FILES = {"wordpiece": "vocab.txt", "sentencepiece": "*.model"}


class CheckpointTensors(Mapping[str, np.ndarray]):
    """The variables of a TF1 checkpoint by name, each read when asked for (floating point as float32).

    Example:
        >>> tensors = CheckpointTensors("uncased_L-2_H-128_A-2/bert_model.ckpt")   # a Google release (not in the test assets)  # doctest: +SKIP
        >>> tensors.shapes["bert/embeddings/word_embeddings"]  # doctest: +SKIP
        (30522, 128)
    """

    def __init__(self, prefix: str | Path):
        import tensorflow as tf

        self.prefix = str(prefix)
        try:
            self._reader = tf.train.load_checkpoint(self.prefix)
        except (tf.errors.OpError, ValueError) as error:
            raise ValueError(f"checkpoint {self.prefix} cannot be read (expected {self.prefix}.index and its "
                             f"{self.prefix}.data-* files): {_first_line(error)}") from None
        self.shapes = {name: tuple(shape) for name, shape in self._reader.get_variable_to_shape_map().items()}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.shapes:
            raise KeyError(name)
        import tensorflow as tf

        try:
            array = np.asarray(self._reader.get_tensor(name))
        except (tf.errors.OpError, RuntimeError) as error:
            raise ValueError(f"checkpoint {self.prefix}: variable {name} cannot be read (are all its "
                             f"{self.prefix}.data-* files there?): {_first_line(error)}") from None
        return array.astype(np.float32) if np.issubdtype(array.dtype, np.floating) else array

    def __iter__(self) -> Iterator[str]:
        return iter(self.shapes)

    def __len__(self) -> int:
        return len(self.shapes)


def _first_line(error: Exception) -> str:
    return str(getattr(error, "message", error)).strip().splitlines()[0]


def _listing(folder: Path) -> str:
    names = sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []
    return ", ".join(names[:12]) + (", ..." if len(names) > 12 else "") if names else "nothing"


def find_checkpoint(folder: str | Path) -> Path:
    """The prefix of the one checkpoint in `folder` (the `checkpoint` file's latest, if it names one).

    Raises `FileNotFoundError` when there is none and `ValueError` when several prefixes leave the choice open.
    """
    import tensorflow as tf

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (expected a TF1 release folder with a checkpoint)")
    latest = tf.train.latest_checkpoint(str(folder))
    if latest is not None:
        return Path(latest)
    prefixes = sorted(index.with_suffix("") for sub in SUBFOLDERS for index in (folder / sub).glob("*.index"))
    if not prefixes:
        raise FileNotFoundError(f"{folder}: no TF1 checkpoint: expected PREFIX.index and PREFIX.data-* files "
                                f"(bert_model.ckpt.index, model.ckpt-best.index, ...); found {_listing(folder)}")
    if len(prefixes) > 1:
        raise ValueError(f"{folder} holds {len(prefixes)} checkpoints ({', '.join(p.name for p in prefixes)}); "
                         "keep one, or name the latest in a `checkpoint` file")
    return prefixes[0]


def detect_family(tensors: CheckpointTensors) -> ArchitectureSpec:
    """The registered family whose `tf1` marker variable the checkpoint holds; `ValueError` if none does."""
    formats = {name: architectures.get(name).formats[FORMAT] for name in architectures.names()
               if FORMAT in architectures.get(name).formats}
    found = [name for name, entry in formats.items() if entry.marker in tensors.shapes]
    if len(found) == 1:
        return architectures.get(found[0])
    expected = "; ".join(f"{entry.marker} ({name})" for name, entry in formats.items())
    examples = ", ".join(sorted(tensors.shapes)[:5]) or "no variables"
    raise ValueError(f"checkpoint {tensors.prefix} matches no known TF1 layout: expected a variable named one of "
                     f"{expected}; found {len(tensors.shapes)} variables such as {examples}")


def find_file(folder: Path, pattern: str) -> Path | None:
    """The one file matching `pattern` in `folder`, `folder/variables` or `folder/assets` (None if there is none)."""
    matches = sorted(path for sub in SUBFOLDERS for path in (folder / sub).glob(pattern) if path.is_file())
    if len(matches) > 1:
        raise ValueError(f"{folder} holds {len(matches)} files matching {pattern} "
                         f"({', '.join(str(path.relative_to(folder)) for path in matches)}); keep one")
    return matches[0] if matches else None


def _read_json(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{path} must hold a JSON object of hyper-parameters, not {type(data).__name__}")
    return data


@dataclasses.dataclass
class TF1Release:
    """A release folder read so far: its checkpoint, family and config (see `read_release`).

    Attributes:
        folder: the release folder.
        tensors: its checkpoint's variables.
        spec: the family the checkpoint's names belong to.
        config: the tfbert config (with ELECTRA's generator when the checkpoint has one).
        config_source: where the sizes came from (the config file, or the checkpoint's shapes).
    """

    folder: Path
    tensors: CheckpointTensors
    spec: ArchitectureSpec
    config: ModelConfig
    config_source: str

    @property
    def format(self):
        return self.spec.format(FORMAT)

    def build_model(self, heads: bool = False, dtype: str | None = None) -> keras.Model:
        """The `Encoder` (heads=False) or the family's pretraining model, with the checkpoint's weights."""
        if heads and self.spec.generator and self.config.generator is None:
            raise ValueError(f"checkpoint {self.tensors.prefix} holds no generator ({self.format.head_scopes[0]}...); "
                             "convert the discriminator alone, without --heads")
        if heads:
            model = self.spec.build_pretraining_model(self.config, dtype=dtype)
            assignments = [*self.format.encoder_weights(model.encoder, self.format.prefix),
                           *self.format.head_weights(model)]
        else:
            model = Encoder(self.config.encoder, dtype=dtype, name="encoder", architecture=self.config.architecture)
            assignments = list(self.format.encoder_weights(model, self.format.prefix))
        used = weights.copy_weights(assignments, self.tensors, f"checkpoint {self.tensors.prefix}", self.config_source)
        self._warn_unused(used, heads)
        return model

    def _warn_unused(self, used: set[str], heads: bool) -> None:
        ignored = () if heads else self.format.head_scopes
        unused = sorted(name for name in self.tensors.shapes if name not in used and name not in IGNORED_NAMES
                        and not name.endswith(IGNORED_SUFFIXES) and not name.startswith(ignored))
        if unused:
            warnings.warn(f"checkpoint {self.tensors.prefix}: {len(unused)} variable(s) not used: "
                          f"{', '.join(unused[:10])}", stacklevel=3)


def read_release(folder: str | Path) -> TF1Release:
    """Finds the checkpoint in `folder`, its family and its config; no model is built yet.

    Raises `FileNotFoundError` for a missing folder, checkpoint or config file, and `ValueError`
    for a checkpoint no family's names match or a config that is not valid.
    """
    folder = Path(folder)
    tensors = CheckpointTensors(find_checkpoint(folder))
    spec = detect_family(tensors)
    entry = spec.format(FORMAT)
    data, source = _config_data(folder, tensors, spec)
    try:
        config = ModelConfig(
            architecture=spec.name,
            encoder=EncoderConfig(**entry.read_config(data)),
            generator=_generator_config(entry, data),
            description=f"converted from the TF1 checkpoint {tensors.prefix}",
        )
    except KeyError as error:
        raise ValueError(f"{source}: required field {error} is missing") from None
    except (TypeError, ValueError) as error:
        raise ValueError(f"{source}: {error}") from None
    return TF1Release(folder, tensors, spec, config, source)


def _generator_config(entry, data: Mapping[str, Any]) -> EncoderConfig | None:
    """The generator's `EncoderConfig` of a release that has one (ELECTRA's), else None."""
    fields = entry.read_generator(data) if entry.read_generator else None
    return None if fields is None else EncoderConfig(**fields)


def _config_data(folder: Path, tensors: CheckpointTensors, spec: ArchitectureSpec) -> tuple[Mapping[str, Any], str]:
    """The family's config mapping and where it came from: its config file, else the checkpoint's shapes."""
    entry = spec.format(FORMAT)
    path = find_file(folder, entry.config_file)
    if path is not None:
        return _read_json(path), str(path)
    if entry.config_from_shapes is None:
        raise FileNotFoundError(f"{folder / entry.config_file} does not exist: a {spec.name} checkpoint needs its "
                                f"{entry.config_file} for its hyper-parameters; found {_listing(folder)}")
    try:
        return entry.config_from_shapes(tensors.shapes), f"the sizes of checkpoint {tensors.prefix}"
    except KeyError as error:
        raise ValueError(f"checkpoint {tensors.prefix} lacks variable {error}, which gives the model's sizes") from None


def _casing_from_name(name: str) -> bool | None:
    """Whether Google's release folder `name` is lower-cased (`uncased_L-12_H-768_A-12`, `multilingual_...`,
    `chinese_...`) or cased (`cased_...`, `multi_cased_...`); None when the name does not say."""
    name = name.lower()
    if "uncased" in name or name.startswith(("multilingual", "chinese")):
        return True
    return False if "cased" in name else None


def release_tokenizer(release: TF1Release, lowercase: bool | None = None):
    """The release's tokenizer: WordPiece from `vocab.txt` or SentencePiece from its `*.model`.

    `lowercase` (from `--cased`/`--uncased`) overrides the family's habit (ALBERT and ELECTRA
    lower-case) and, for BERT, what the folder name says; a BERT folder whose name says neither
    needs it. Raises `FileNotFoundError` for a missing vocabulary and `ValueError` for one larger
    than the model's embedding table.
    """
    # Deferred (start-up): `tfbert.text` imports TensorFlow; reading a release's config and weights needs only Keras
    from tfbert.text import SentencePieceTokenizer, WordPieceTokenizer

    kind = release.spec.tokenizer
    path = find_file(release.folder, VOCABULARY_FILES[kind])
    if path is None:
        raise FileNotFoundError(f"{release.folder} has no {VOCABULARY_FILES[kind]}: the vocabulary of a "
                                f"{release.spec.name} checkpoint; found {_listing(release.folder)}")
    for choice in (lowercase, release.format.lowercase, _casing_from_name(release.folder.resolve().name)):
        if choice is not None:
            break
    else:
        raise ValueError(f"cannot tell from the folder name {release.folder.resolve().name!r} whether the model is "
                         "cased or uncased (Google's names start cased_ or uncased_); pass --cased or --uncased")
    classes = {"wordpiece": WordPieceTokenizer, "sentencepiece": SentencePieceTokenizer}
    tokenizer = classes[kind](path, lowercase=choice)
    if tokenizer.vocabulary_size() > release.config.encoder.vocab_size:
        raise ValueError(f"{path} has {tokenizer.vocabulary_size()} tokens but {release.config_source} gives "
                         f"vocab_size {release.config.encoder.vocab_size}; they belong to different models")
    return tokenizer


def load_tf1(folder: str | Path, heads: bool = False, dtype: str | None = None) -> keras.Model:
    """Builds a tfbert model from a TF1 release folder and loads its weights.

    `heads=False` gives the `Encoder` (ELECTRA's discriminator); `heads=True` the family's
    pretraining model: `PretrainingModel` with MLM + NSP (BERT) or MLM + SOP (ALBERT), or
    `ElectraPretrainingModel` (the generator shares the discriminator's embeddings).

    Example:
        >>> encoder = load_tf1("uncased_L-2_H-128_A-2/")   # a Google release (not in the test assets)  # doctest: +SKIP
        >>> encoder.config.hidden_size, encoder.config.activation  # doctest: +SKIP
        (128, 'gelu_new')
    """
    return read_release(folder).build_model(heads=heads, dtype=dtype)
