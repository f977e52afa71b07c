"""Pretraining that starts from an existing model: `tfbert pretrain --init-from SOURCE`.

`read_source` recognises SOURCE (a Hugging Face folder, a `.keras` file, a pretraining run folder,
a `finetune` model dir or a Google TF1 release folder) and gives its config, its tokenizer and a
way to build it with the heads it has. `initialize_from` copies its weights into a freshly built
pretraining model: the encoder always, each head the target has where SOURCE has one of the same
name and shape; the others keep their initial weights and are reported as created. A tokenizer
that extends SOURCE's (`tfbert vocab add`) grows the token table and the MLM output bias, each new
row the mean of the rows of the pieces the word used to split into (`grow_rows`). SOURCE is only
read.

Example:
    >>> source = read_source("runs/bert")          # a `tfbert pretrain` run: MLM and NSP heads
    >>> model = source.spec.build_pretraining_model(source.config, ("mlm",))
    >>> initialize_from(model, source)
    Initialized(kept=['encoder', 'mlm_head'], created=[])
"""

from __future__ import annotations

import dataclasses
import logging
import zipfile
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import keras

from tfbert import architectures, artifacts
from tfbert.architectures import ArchitectureSpec
from tfbert.artifacts.checkpoints import newest_checkpoint, restore_model_weights
from tfbert.artifacts.layout import RUN_CONFIG_FILE, RUN_ENCODER_FILE
from tfbert.config import EncoderConfig, ModelConfig
from tfbert.convert.huggingface import (load_huggingface, load_state_dict, read_folder_config, read_state_dict,
                                        warn_unused)
from tfbert.convert.tf1 import read_release, release_tokenizer
from tfbert.models.encoder import Encoder
from tfbert.models.resize import grow_rows
from tfbert.text.base import Tokenizer
from tfbert.text.vocabulary_growth import check_extension, old_pieces_of_added_tokens

logger = logging.getLogger(__name__)

SOURCE_KINDS = ("a Hugging Face folder (config.json + model.safetensors), a .keras model file, a tfbert pretraining "
                "run folder (config.yaml + checkpoints), a tfbert finetune model dir (best.keras + task.json), a "
                "converted checkpoint, a keras-hub preset or a Google TF1 release folder (model.ckpt + *_config.json)")

if TYPE_CHECKING:
    from tfbert.artifacts import Artifact


@dataclasses.dataclass
class InitSource:
    """A model to start pretraining from (see `read_source`).

    Attributes:
        path: SOURCE as given.
        kind: `huggingface`, `keras`, `run`, `finetune` or `tf1`.
        config: its config (architecture and encoder sizes); None for an encoder whose architecture
            nothing beside it says (then `--config` must).
        tokenizer: the tokenizer that goes with it, None where it has none.
        build: builds SOURCE with its weights: its pretraining model where it has heads, else its encoder.
        artifact: SOURCE as `tfbert.artifacts.open` read it (opened once; the run's manifest names it).
    """

    path: Path
    kind: str
    config: ModelConfig | None
    tokenizer: Tokenizer | None
    build: Callable[[], keras.Model]
    artifact: "Artifact | None" = None

    @property
    def spec(self) -> ArchitectureSpec:
        return architectures.get(self.config.architecture)

    @cached_property
    def model(self) -> keras.Model:
        return self.build()

    @property
    def vocab_size(self) -> int:
        """Rows of its token table."""
        if self.config is not None:
            return self.config.encoder.vocab_size
        return (self.model if isinstance(self.model, Encoder) else self.model.encoder).config.vocab_size


@dataclasses.dataclass(frozen=True)
class Initialized:
    """What `initialize_from` did: the target's top-level parts taken from SOURCE and those created anew."""

    kept: list[str]
    created: list[str]

    def describe(self, source: InitSource) -> str:
        created = f"; created (new weights): {', '.join(self.created)}" if self.created else ""
        return f"initialized from {source.kind} {source.path}: kept {', '.join(self.kept)}{created}"


def read_source(path: str | Path) -> InitSource:
    """The `InitSource` at `path` (read by `tfbert.artifacts.open`); `ValueError` naming the accepted kinds and
    what was found there."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"--init-from {path}: no such file or folder; expected {SOURCE_KINDS}")
    try:
        artifact = artifacts.open(path)
    except ValueError as error:
        raise ValueError(f"--init-from {path} is none of the accepted kinds: {SOURCE_KINDS}; {error}") from None
    return dataclasses.replace(_source_of(artifact), artifact=artifact)


def _source_of(artifact: "Artifact") -> InitSource:
    path = artifact.path
    if artifact.kind == "pretraining-run":
        return _run_source(artifact)
    if artifact.kind == "huggingface":
        return _huggingface_source(artifact)
    if artifact.kind == "tf1":
        return _tf1_source(path)
    if artifact.kind == "keras-hub":
        config = ModelConfig(architecture=artifact.family, encoder=EncoderConfig.from_dict(artifact.config))
        return InitSource(path, "keras-hub", config, artifact.tokenizer, artifact.load_encoder)
    if artifact.model_file is not None:
        return _keras_source(artifact, {"model-dir": "finetune", "keras": "keras"}.get(artifact.kind, "keras"))
    raise ValueError(f"--init-from {path} is a {artifact.kind}, which holds no model; expected {SOURCE_KINDS}")


def _keras_source(artifact, kind: str) -> InitSource:
    """A `.keras` file: an `Encoder`, a pretraining model or a task model (`finetune`'s `best.keras`)."""
    path = artifact.model_file
    if path.suffix != ".keras" or not zipfile.is_zipfile(path):
        raise ValueError(f"--init-from {path} is a file but not a .keras model; expected {SOURCE_KINDS}")
    model = artifact.load_model()
    config = getattr(model, "config", None)
    if not isinstance(config, ModelConfig):
        encoder = model if isinstance(model, Encoder) else getattr(model, "encoder", None)
        if not isinstance(encoder, Encoder):
            raise ValueError(f"--init-from {path} holds a {type(model).__name__} with no tfbert encoder")
        architecture = artifact.family or encoder.architecture
        config = None if architecture is None else ModelConfig(architecture=architecture, encoder=encoder.config)
    return InitSource(artifact.path, kind, config, artifact.tokenizer, lambda: model)


def _run_source(artifact: "Artifact") -> InitSource:
    """A `tfbert pretrain` run folder: its newest checkpoint (heads included), else `encoder/encoder.keras`.

    A TensorFlow-format checkpoint read on another backend also falls back to the encoder file (only TensorFlow
    reads its checkpoints; the run's heads start fresh, which is logged)."""
    folder, config = artifact.path, artifact.run_config()
    checkpoint = newest_checkpoint(folder)
    if checkpoint is not None and checkpoint.format == "tensorflow" and keras.backend.backend() != "tensorflow":
        logger.info("--init-from %s: its checkpoint %s is TensorFlow's, which the %s backend cannot read; "
                    "starting from its encoder/encoder.keras (the heads start fresh)", folder, checkpoint.path,
                    keras.backend.backend())
        checkpoint = None
    if checkpoint is None:
        if artifact.encoder_file is None:
            raise ValueError(f"--init-from {folder} has {RUN_CONFIG_FILE} but neither a checkpoint (ckpt-N) nor "
                             f"{RUN_ENCODER_FILE}")
        encoder = dataclasses.replace(artifact, kind="keras", model_file=artifact.encoder_file)
        return dataclasses.replace(_keras_source(encoder, "run"), path=folder, config=config)

    def build() -> keras.Model:
        spec = architectures.get(config.architecture)
        named = config.pretraining.objectives if config.pretraining else None
        model = spec.build_pretraining_model(config, spec.objectives_named(named) if named else None)
        restore_model_weights(model, checkpoint)
        return model
    return InitSource(folder, "run", config, artifact.tokenizer, build)


def _huggingface_source(artifact: "Artifact") -> InitSource:
    """A Hugging Face folder: the family's pretraining model when the checkpoint holds its heads, else the encoder."""
    folder = artifact.path
    config = read_folder_config(folder)
    spec = architectures.get(config.architecture)

    def build() -> keras.Model:
        state = read_state_dict(folder)
        encoder, unused = None, []
        for objectives in _objective_sets_largest_first(spec):
            model = spec.build_pretraining_model(config, objectives)
            try:
                load_state_dict(model, state, config.architecture, folder)
                return model
            except ValueError:
                pass
            if encoder is None:   # the first model's encoder: other heads are worth trying only if tensors are left
                encoder, unused = model.encoder, load_state_dict(model.encoder, state, config.architecture, folder)
                if not unused:
                    return encoder
        if encoder is None:
            return load_huggingface(folder)
        warn_unused(folder, unused)
        return encoder
    return InitSource(folder, "huggingface", config, artifact.tokenizer, build)


def _objective_sets_largest_first(spec: ArchitectureSpec) -> list[tuple[str, ...]]:
    """The family's objective sets whose heads a Hugging Face checkpoint can hold, most heads first."""
    entry = spec.formats.get("huggingface")
    if entry is None or entry.head_weights is None:
        return []
    return sorted(set(spec.choosable_objectives().values()), key=len, reverse=True)


def _tf1_source(folder: Path) -> InitSource:
    """A Google TF1 release: its pretraining model with the heads (`cls/...`) when it has them, else the encoder."""
    release = read_release(folder)
    try:
        tokenizer = release_tokenizer(release)
    except (OSError, ValueError):
        tokenizer = None

    def build() -> keras.Model:
        try:
            return release.build_model(heads=True)
        except ValueError:
            return release.build_model(heads=False)
    return InitSource(folder, "tf1", release.config, tokenizer, build)


def added_token_pieces(source: InitSource, tokenizer: Tokenizer) -> dict[int, list[int]]:
    """`{new id: old piece ids}` for the tokens `tokenizer` adds to SOURCE's vocabulary ({} when it adds none).

    Raises `ValueError` naming both sizes when the tokenizer is smaller than SOURCE's table or does
    not extend SOURCE's tokenizer.
    """
    rows, size = source.vocab_size, tokenizer.vocabulary_size()
    if size == rows:
        return {}
    if size < rows or source.tokenizer is None:
        raise ValueError(f"the tokenizer has {size} tokens but --init-from {source.path}'s token table has {rows} rows; "
                         "give the tokenizer it was trained with, or one that extends it (tfbert vocab add)")
    if source.tokenizer.vocabulary_size() != rows:
        raise ValueError(f"--init-from {source.path}'s tokenizer has {source.tokenizer.vocabulary_size()} tokens but "
                         f"its token table {rows} rows; cannot tell which rows the added tokens follow")
    check_extension(source.tokenizer, tokenizer, f"--init-from {source.path}")
    return old_pieces_of_added_tokens(source.tokenizer, tokenizer)


def initialize_from(model: keras.Model, source: InitSource,
                    pieces: Mapping[int, Sequence[int]] | None = None) -> Initialized:
    """Copies SOURCE's weights into `model` (a pretraining model); returns which parts were kept or created.

    The encoder must match SOURCE's (a `ValueError` names the first weight that does not); the token
    table and the MLM output bias may have more rows, filled by `grow_rows` from `pieces`. Each other
    top-level layer of `model` is copied from SOURCE's layer of the same name when their weights fit.
    """
    donor = source.model
    donor_encoder = donor if isinstance(donor, Encoder) else donor.encoder
    growth = Growth(donor_encoder.config.vocab_size, model.encoder.config.vocab_size, pieces or {})
    _copy_layer(donor_encoder, model.encoder, growth, strict=True)
    kept, created = ["encoder"], []
    donor_parts = {} if isinstance(donor, Encoder) else {part.name: part for part in _parts(donor)}
    for part in _parts(model):
        match = donor_parts.get(part.name)
        if match is not None and _copy_layer(match, part, growth, strict=False):
            kept.append(part.name)
        else:
            created.append(part.name)
    result = Initialized(kept, created)
    logger.info(result.describe(source))
    return result


def _parts(model: keras.Model) -> list[keras.layers.Layer]:
    """The parts of a pretraining model besides its encoder: other encoders it holds (ELECTRA's generator),
    then its top-level layers with weights of their own (heads), each layer once."""
    encoders = [value for value in vars(model).values() if isinstance(value, Encoder) and value is not model.encoder]
    covered = {id(weight) for encoder in [model.encoder, *encoders] for weight in encoder.weights}
    heads = [layer for layer in model.layers
             if layer.weights and not all(id(weight) in covered for weight in layer.weights)]
    return list({id(part): part for part in encoders + heads}.values())


@dataclasses.dataclass(frozen=True)
class Growth:
    """A vocabulary growing from `old` to `new` rows, each added row the mean of its `pieces` (old ids)."""

    old: int
    new: int
    pieces: Mapping[int, Sequence[int]]

    def fits(self, old: Sequence[int], new: Sequence[int]) -> bool:
        """Same shape, or a vocabulary-sized first axis that grows from `old` to `new` rows."""
        old, new = tuple(old), tuple(new)
        return old == new or (len(old) == len(new) >= 1 and old[1:] == new[1:] and (old[0], new[0]) == (self.old, self.new))


def _copy_layer(donor: keras.layers.Layer, target: keras.layers.Layer, growth: Growth, strict: bool) -> bool:
    """Assigns `donor`'s weights to `target`'s in order; False (nothing assigned) when they do not fit, unless `strict`."""
    pairs = list(zip(donor.weights, target.weights))
    misfit = next(((old, new) for old, new in pairs if not growth.fits(old.shape, new.shape)), None)
    if misfit is not None or len(donor.weights) != len(target.weights):
        if not strict:
            return False
        old, new = misfit or (None, None)
        detail = (f"{old.path} {tuple(old.shape)} does not fit {new.path} {tuple(new.shape)}" if misfit
                  else f"{len(donor.weights)} weights against {len(target.weights)}")
        raise ValueError(f"the config does not match the --init-from model: {detail}; leave out --config to use "
                         "the source's own")
    for old, new in pairs:
        value = old.value if tuple(old.shape) == tuple(new.shape) else grow_rows(old.value, new.value, growth.pieces)
        new.assign(value)
    return True

