"""What a pretraining run is made of, from `pretrain`'s arguments: its config, tokenizer, source and optimizer.

Each argument is checked before any data or tokenizer is read where it can be (`check_config_argument`,
`check_sequence_length`): a `.keras` file given as a config, an unknown config name, bad YAML, a sequence length
above the model's positions. The config then gets the tokenizer's vocabulary size and padding id
(`config_for_tokenizer`) and records the objectives the run trains (`with_recorded_objectives`).

Example:
    >>> from tfbert.config import load_config
    >>> check_sequence_length(load_config("bert_tiny"), 4096)
    Traceback (most recent call last):
    ...
    ValueError: --sequence-length 4096 is above the model's limit of 512 positions (max_positions in the config); ...
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Sequence

from tfbert import architectures
from tfbert.architectures import ArchitectureSpec
from tfbert.config import ModelConfig, PretrainingDefaults, load_config, read_config_mapping
from tfbert.convert.huggingface import config_from_huggingface
from tfbert.text.base import Tokenizer
from tfbert.text.loading import as_tokenizer
from tfbert.training.initialization import InitSource, read_source

logger = logging.getLogger(__name__)

# Stands in for the tokenizer's size where a config is checked before the tokenizer is read.
PROVISIONAL_VOCAB_SIZE = 1 << 20


def architecture_of(config: ModelConfig) -> ArchitectureSpec:
    """The registered family of `config` (`tfbert.architectures`): its example recipe, packing, optimizer."""
    return architectures.get(config.architecture)


def read_source_for(init_from: str | Path | None, model_dir: str) -> InitSource | None:
    """`read_source(init_from)`, refusing a `model_dir` that is SOURCE itself (SOURCE is never written)."""
    if init_from is None:
        return None
    if "://" not in model_dir and Path(model_dir).resolve() == Path(init_from).resolve():
        raise ValueError(f"--model-dir {model_dir} is the --init-from folder, which is never written; give a new "
                         "--model-dir, or rerun that run's own command without --init-from to resume it")
    return read_source(init_from)


def run_tokenizer(tokenizer: str | Path | Tokenizer | None, source: InitSource | None) -> Tokenizer:
    """The tokenizer given, else SOURCE's."""
    if tokenizer is not None:
        return as_tokenizer(tokenizer)
    if source is None:
        raise ValueError("give a tokenizer (--tokenizer), or a model to start from (--init-from) that has one")
    if source.tokenizer is None:
        raise ValueError(f"--init-from {source.path} comes with no tokenizer that tfbert reads; give --tokenizer")
    return source.tokenizer


def run_config(config: str | Path | ModelConfig | None, tokenizer: Tokenizer, source: InitSource | None) -> ModelConfig:
    """The config given (a shipped name, a YAML file or a Hugging Face `config.json`), else SOURCE's; sized for the tokenizer.

    The tokenizer gives `vocab_size` (see `load_config`) and `pad_id`.
    """
    if config is None:
        if source is None:
            raise ValueError("give a config (--config), or a model to start from (--init-from)")
        if source.config is None:
            raise ValueError(f"--init-from {source.path} holds an encoder but no preprocessor.json or config.yaml "
                             "beside it says its architecture; give --config")
        config = source.config
    if not isinstance(config, ModelConfig):
        config = load_run_config(config, tokenizer.vocabulary_size())
    return config_for_tokenizer(config, tokenizer)


def load_run_config(path: str | Path, vocab_size: int) -> ModelConfig:
    """A shipped config name or YAML file (`load_config`), or a Hugging Face `config.json` (its sizes; the
    vocabulary is the tokenizer's); a `.keras` file is refused with what to do instead."""
    path = Path(path)
    check_config_argument(path)
    if path.suffix == ".json":
        return hugging_face_config_file(path, vocab_size)
    return load_config(path, vocab_size=vocab_size)


def check_config_argument(path: str | Path, sequence_length: int | None = None) -> None:
    """Fails early, before any data or tokenizer is read, for a `.keras` file, an unknown config name, bad
    YAML, an invalid field or a `sequence_length` above the config's positions."""
    path = Path(path)
    if path.suffix == ".keras":
        raise ValueError(f"--config {path} is a Keras model, not a config; to start from its weights give "
                         "--init-from, and --config a YAML file, a shipped config name or a config.json")
    if path.suffix == ".json":
        config = hugging_face_config_file(path, PROVISIONAL_VOCAB_SIZE)
    else:
        data, source = read_config_mapping(path)
        try:
            config = ModelConfig.from_dict(with_provisional_vocab_size(data if data is not None else {}))
        except (ValueError, TypeError) as error:
            raise ValueError(f"config {source!r}: {error}") from None
    if sequence_length is not None:
        check_sequence_length(config, sequence_length)


def with_provisional_vocab_size(data):
    """A config mapping whose encoders lacking `vocab_size` get `PROVISIONAL_VOCAB_SIZE`."""
    if not isinstance(data, dict):
        return data
    return {key: {"vocab_size": PROVISIONAL_VOCAB_SIZE, **value}
            if key in ("encoder", "generator") and isinstance(value, dict) else value for key, value in data.items()}


def check_sequence_length(config: ModelConfig, sequence_length: int) -> None:
    """`ValueError` for a sequence length above the model's positions."""
    if sequence_length > config.encoder.max_sequence_length:
        raise ValueError(f"--sequence-length {sequence_length} is above the model's limit of "
                         f"{config.encoder.max_sequence_length} positions (max_positions in the config); "
                         "give a shorter --sequence-length or a config with more positions")


def hugging_face_config_file(path: Path, vocab_size: int) -> ModelConfig:
    """The tfbert config of a Hugging Face `config.json` (`model_type` picks the family); `vocab_size` is the tokenizer's."""
    if not path.is_file():
        raise FileNotFoundError(f"config file {str(path)!r} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"config {str(path)!r} is not valid JSON: {error}") from None
    if not isinstance(data, dict) or "model_type" not in data:
        raise ValueError(f"config {str(path)!r} is JSON without model_type: give a Hugging Face config.json or a "
                         "YAML config")
    try:
        return config_from_huggingface({**data, "vocab_size": vocab_size})
    except KeyError as error:
        raise ValueError(f"config {str(path)!r}: required field {error} is missing") from None
    except (AttributeError, TypeError, ValueError) as error:
        raise ValueError(f"config {str(path)!r}: {error}") from None


def config_for_tokenizer(config: ModelConfig, tokenizer: Tokenizer) -> ModelConfig:
    """`config` with the tokenizer's vocabulary size and padding id (ELECTRA's generator too)."""
    size, pad_id = tokenizer.vocabulary_size(), tokenizer.pad_id
    if (config.encoder.vocab_size, config.encoder.pad_id) != (size, pad_id):
        logger.info("vocab_size %d -> %d and pad_id %d -> %d from the tokenizer",
                    config.encoder.vocab_size, size, config.encoder.pad_id, pad_id)
    encoder = config.encoder.replace(vocab_size=size, pad_id=pad_id)
    if encoder.position_offset:
        encoder = encoder.replace(position_offset=pad_id + 1)
    if config.generator is None:
        return config.replace(encoder=encoder)
    generator = config.generator.replace(vocab_size=size, pad_id=pad_id)
    if generator.position_offset:
        generator = generator.replace(position_offset=pad_id + 1)
    return config.replace(encoder=encoder, generator=generator)


def with_recorded_objectives(config: ModelConfig, objectives: Sequence[str]) -> ModelConfig:
    """`config` whose `pretraining.objectives` names what the run trains (the run's `config.yaml` says so)."""
    defaults = config.pretraining or PretrainingDefaults()
    return config.replace(pretraining=dataclasses.replace(defaults, objectives=",".join(objectives)))


def optimizer_settings(
    config: ModelConfig,
    steps: int,
    optimizer_recipe: str | None = None,
    learning_rate: float | None = None,
    warmup_steps: int | None = None,
) -> tuple[str, float | None, int | None]:
    """The optimizer recipe, peak learning rate and warm-up steps a pretraining run uses.

    What the caller gives wins; then the config's `pretraining` section (its learning rate
    and warm-up only apply to its own optimizer); then the architecture's published recipe
    (`None` leaves the recipe's own rate or warm-up in `create_optimizer`).

    Example:
        >>> optimizer_settings(load_config("albert_base"), 10_000)
        ('albert', None, None)
    """
    defaults = config.pretraining
    config_recipe = (defaults and defaults.optimizer) or architecture_of(config).optimizer
    recipe_name = optimizer_recipe or config_recipe
    if defaults is not None and recipe_name == config_recipe:
        if learning_rate is None:
            learning_rate = defaults.learning_rate
        if warmup_steps is None and defaults.warmup_fraction is not None:
            warmup_steps = int(round(defaults.warmup_fraction * steps))
    return recipe_name, learning_rate, warmup_steps
