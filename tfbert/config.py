"""Validated model configurations, loaded from and saved to YAML.

An architecture in tfbert is a configuration plus its heads: every encoder is
made by one builder from an `EncoderConfig`, and a `ModelConfig` adds which
architecture's heads sit on top.

Example:
    >>> from tfbert.config import load_config
    >>> config = load_config("bert_base")
    >>> config.encoder.hidden_size
    768
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import yaml

from tfbert import architectures
from tfbert.architectures.configs import shipped_configs
from tfbert.architectures.spec import ACTIVATIONS

if TYPE_CHECKING:
    from tfbert.architectures.spec import ArchitectureSpec

SHARING_STRATEGIES = ("none", "all", "attention", "ffn")
# A block's feed-forward: two dense layers (BERT) or a gated linear unit (GLU).
FEED_FORWARD_KINDS = ("dense", "gated")
# How positions enter: a learned table added to the embeddings, rotary query/key rotations, or
# DeBERTa's disentangled relative attention (content-to-position and position-to-content).
POSITION_KINDS = ("absolute", "rotary", "relative")


def field_error(field: str, value: Any, allowed: str) -> ValueError:
    """The error for a config field: which field, the value found and what is allowed."""
    return ValueError(f"invalid config field {field!r}: got {value!r}; {allowed}")


def _fail(field: str, value: Any, allowed: str) -> None:
    raise field_error(field, value, allowed)


# The largest size each field may have: far above every published model (the largest have ~250k tokens, 8k
# positions, 128 layers, a width of 25k), so a typo (`num_layers: 1e9`) fails at once instead of building for minutes.
# A token table past what TF-Text's vocabularies hold (4,194,304) could never be fed by a tfbert tokenizer.
SIZE_LIMITS = {"vocab_size": 4_194_304, "hidden_size": 65_536, "num_layers": 1_024, "num_heads": 1_024,
               "intermediate_size": 262_144, "embedding_size": 65_536, "max_positions": 1_048_576,
               "num_hidden_groups": 1_024, "inner_group_num": 1_024, "type_vocab_size": 1_024,
               "num_languages": 4_096, "position_buckets": 1_048_576, "max_relative_positions": 1_048_576}


def _check_int(field: str, value: Any, minimum: int) -> None:
    maximum = SIZE_LIMITS.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        _fail(field, value, f"expected an integer >= {minimum}" + (f" and <= {maximum:,}" if maximum else ""))
    if maximum is not None and value > maximum:
        _fail(field, value, f"expected at most {maximum:,} (larger than any model tfbert can build and train)")


def _check_rate(field: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        _fail(field, value, "expected a number in [0, 1)")


def _check_positive_float(field: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        _fail(field, value, "expected a number > 0")


def _from_mapping(cls, data: Mapping[str, Any], where: str):
    if not isinstance(data, Mapping):
        _fail(where, data, f"expected a mapping of {cls.__name__} fields")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        _fail(f"{where}.{unknown[0]}" if where else unknown[0], data[unknown[0]],
              f"unknown key; allowed keys are {', '.join(sorted(known))}")
    missing = [f.name for f in dataclasses.fields(cls)
               if f.name not in data and f.default is dataclasses.MISSING]
    if missing:
        raise ValueError(f"invalid config: required field {where + '.' if where else ''}{missing[0]!r} is missing")
    return cls(**data)


@dataclasses.dataclass(frozen=True)
class EncoderConfig:
    """Hyper-parameters of one transformer encoder (BERT, ALBERT, RoBERTa, XLM, ...).

    `embedding_size` smaller than `hidden_size` gives ALBERT's factorized
    embeddings (a projection from E to H). `sharing` decides which transformer
    blocks reuse weights: `none` (BERT), `all` (ALBERT), `attention` or `ffn`
    (only that sub-layer shared). With sharing, layer `i` uses group
    `i * num_hidden_groups // num_layers`, and each group holds
    `inner_group_num` blocks applied in order, as in ALBERT.

    `embedding_size` larger than `hidden_size` is allowed too (ELECTRA-small's
    generator reads the discriminator's 128-wide embeddings into 64 units).
    `pooler: false` drops the tanh pooler (ELECTRA, XLM have none); the
    `pooled_output` is then the first token's hidden state. `position_ids_input:
    true` adds a `position_ids` input that replaces the computed positions
    (XLM's TLM restarts positions at the second sentence).

    The block options: `norm_first: true` puts each LayerNorm before its sub-layer (pre-LN) and
    adds a final LayerNorm after the last layer; `feed_forward: gated` is a GLU feed-forward
    (`Dense(activation(gate(x)) * up(x))`); `positions` is `absolute` (a learned table, BERT),
    `rotary` (queries and keys rotated by position, base `rotary_base`) or `relative` (DeBERTa's
    disentangled attention over relative positions: `position_buckets` log buckets, 0 for none,
    distances up to `max_relative_positions`, 0 for `max_positions`; `share_attention_key` uses
    the content query/key projections for the position table too). The defaults are BERT's.

    Example:
        >>> albert = EncoderConfig(vocab_size=30000, hidden_size=768, embedding_size=128, sharing="all")
        >>> deberta = EncoderConfig(vocab_size=128100, positions="relative", position_buckets=256, type_vocab_size=0)
        >>> albert.num_layers, deberta.position_buckets
        (12, 256)
    """

    vocab_size: int
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    embedding_size: int | None = None
    activation: str = "gelu"
    dropout_rate: float = 0.1
    attention_dropout_rate: float = 0.1
    max_positions: int = 512
    type_vocab_size: int = 2
    num_languages: int = 0
    layer_norm_epsilon: float = 1e-12
    initializer_range: float = 0.02
    position_offset: int = 0
    pad_id: int = 0
    sharing: str = "none"
    num_hidden_groups: int = 1
    inner_group_num: int = 1
    pooler: bool = True
    position_ids_input: bool = False
    norm_first: bool = False
    feed_forward: str = "dense"
    positions: str = "absolute"
    rotary_base: float = 10000.0
    position_buckets: int = 0
    max_relative_positions: int = 0
    share_attention_key: bool = True

    def __post_init__(self) -> None:
        if self.embedding_size is None:
            object.__setattr__(self, "embedding_size", self.hidden_size)
        for name in ("vocab_size", "hidden_size", "num_layers", "num_heads", "intermediate_size",
                     "embedding_size", "max_positions", "num_hidden_groups", "inner_group_num"):
            _check_int(name, getattr(self, name), 1)
        for name in ("type_vocab_size", "num_languages", "position_offset", "pad_id", "position_buckets",
                     "max_relative_positions"):
            _check_int(name, getattr(self, name), 0)
        _check_rate("dropout_rate", self.dropout_rate)
        _check_rate("attention_dropout_rate", self.attention_dropout_rate)
        _check_positive_float("layer_norm_epsilon", self.layer_norm_epsilon)
        _check_positive_float("initializer_range", self.initializer_range)
        if self.hidden_size % self.num_heads:
            _fail("hidden_size", self.hidden_size,
                  f"must be divisible by num_heads ({self.num_heads}); try {self.num_heads * max(1, round(self.hidden_size / self.num_heads))}")
        for name in ("pooler", "position_ids_input", "norm_first", "share_attention_key"):
            if not isinstance(getattr(self, name), bool):
                _fail(name, getattr(self, name), "expected true or false")
        self._check_block_options()
        if self.activation not in ACTIVATIONS:
            _fail("activation", self.activation, f"allowed: {', '.join(ACTIVATIONS)}")
        if self.sharing not in SHARING_STRATEGIES:
            _fail("sharing", self.sharing, f"allowed: {', '.join(SHARING_STRATEGIES)}")
        if self.sharing == "none" and (self.num_hidden_groups != 1 or self.inner_group_num != 1):
            _fail("num_hidden_groups" if self.num_hidden_groups != 1 else "inner_group_num",
                  self.num_hidden_groups if self.num_hidden_groups != 1 else self.inner_group_num,
                  "groups apply only to shared layers; set sharing to all, attention or ffn, or use 1")
        if self.num_hidden_groups > self.num_layers:
            _fail("num_hidden_groups", self.num_hidden_groups, f"must be at most num_layers ({self.num_layers})")
        if self.pad_id >= self.vocab_size:
            _fail("pad_id", self.pad_id, f"must be smaller than vocab_size ({self.vocab_size})")
        if self.position_offset >= self.max_positions:
            _fail("position_offset", self.position_offset, f"must be smaller than max_positions ({self.max_positions})")

    def _check_block_options(self) -> None:
        if self.feed_forward not in FEED_FORWARD_KINDS:
            _fail("feed_forward", self.feed_forward, f"allowed: {', '.join(FEED_FORWARD_KINDS)}")
        if self.positions not in POSITION_KINDS:
            _fail("positions", self.positions, f"allowed: {', '.join(POSITION_KINDS)}")
        _check_positive_float("rotary_base", self.rotary_base)
        if self.positions == "rotary" and self.head_size % 2:
            _fail("positions", self.positions, f"rotary positions need an even head size; got {self.head_size}")
        if self.position_buckets and self.position_buckets < 4:
            _fail("position_buckets", self.position_buckets, "expected 0 (no buckets) or at least 4")
        if self.positions != "absolute" and (self.position_offset or self.position_ids_input):
            _fail("positions", self.positions, "position_offset and position_ids_input apply only to absolute positions")

    @property
    def relative_span(self) -> int:
        """How many relative distances each side the relative position table holds (DeBERTa's `pos_ebd_size`)."""
        return self.position_buckets or self.max_relative_distance

    @property
    def max_relative_distance(self) -> int:
        """The distance the log buckets reach (`max_relative_positions`, or `max_positions` when 0)."""
        return self.max_relative_positions or self.max_positions

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def max_sequence_length(self) -> int:
        """Longest input the position table allows (RoBERTa's offset uses some rows)."""
        return self.max_positions - self.position_offset

    def group_of_layer(self, layer: int) -> int:
        """Which shared group transformer layer `layer` uses (ALBERT's assignment)."""
        return layer * self.num_hidden_groups // self.num_layers

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "EncoderConfig":
        return _from_mapping(cls, data, "encoder")

    def replace(self, **changes: Any) -> "EncoderConfig":
        return dataclasses.replace(self, **changes)


# Embedding hyper-parameters an ELECTRA generator must share with its discriminator,
# because the two use one embedding layer.
SHARED_EMBEDDING_FIELDS = (
    "vocab_size", "embedding_size", "max_positions", "type_vocab_size", "num_languages",
    "position_offset", "pad_id", "layer_norm_epsilon", "position_ids_input",
)


def scaled_generator(discriminator: EncoderConfig, fraction: float = 0.25) -> EncoderConfig:
    """An ELECTRA generator config: `fraction` of the discriminator's width, same depth and embeddings.

    Hidden size, heads and intermediate size scale by `fraction` (at least one
    head); the embedding hyper-parameters stay the discriminator's, since the
    two share one embedding layer. The paper's generators are 1/4 (small,
    large) and 1/3 (base) of the discriminator.

    Example:
        >>> scaled_generator(load_config("electra_base").encoder, 1 / 3).hidden_size
        256
    """
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        _fail("generator_fraction", fraction, "expected a number in (0, 1]")
    heads = max(1, round(discriminator.num_heads * fraction))
    hidden = heads * max(1, round(discriminator.hidden_size * fraction / heads))
    return discriminator.replace(
        hidden_size=hidden,
        num_heads=heads,
        intermediate_size=max(1, round(discriminator.intermediate_size * fraction)),
        pooler=False,
    )


@dataclasses.dataclass(frozen=True)
class PretrainingDefaults:
    """The pretraining recipe a config asks for, used by `pretrain` where its caller gives none.

    `optimizer` names a `tfbert.training.optimization` recipe (`bert` is AdamW, `albert` LAMB);
    `learning_rate` and `warmup_fraction` (of the total steps) replace that recipe's peak rate
    and warm-up, but only while the optimizer is this one: asking `pretrain` for another
    optimizer gets that optimizer's own recipe. The published configs have none (the papers'
    recipes apply); the tiny CPU configs set one, because the papers' recipes are made for
    batches of thousands and runs of 100k+ steps (see benchmarks/RESULTS.md).

    `objectives` names the objectives to train as `tfbert pretrain --objectives` does (`mlm`,
    `mlm,sop`; default: the architecture's paper); a run's `config.yaml` records the ones it trained.

    Example (YAML):
        pretraining:
          optimizer: bert
          learning_rate: 2.0e-3
          warmup_fraction: 0.1
          objectives: mlm
    """

    optimizer: str | None = None
    learning_rate: float | None = None
    warmup_fraction: float | None = None
    objectives: str | None = None

    def __post_init__(self) -> None:
        if self.objectives is not None and not isinstance(self.objectives, str):
            _fail("pretraining.objectives", self.objectives, "expected objective names joined by commas such as 'mlm,sop'")
        if self.optimizer is not None and not isinstance(self.optimizer, str):
            _fail("pretraining.optimizer", self.optimizer, "expected an optimizer recipe name such as 'bert'")
        if self.learning_rate is not None:
            _check_positive_float("pretraining.learning_rate", self.learning_rate)
        if self.warmup_fraction is not None:
            _check_rate("pretraining.warmup_fraction", self.warmup_fraction)

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in dataclasses.asdict(self).items() if value is not None}


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """An architecture: which heads and objectives sit on an encoder config.

    ELECTRA pretraining also needs a `generator` encoder config (see
    `scaled_generator`; a discriminator converted alone has none); it must
    agree with `encoder`, the discriminator, on every embedding
    hyper-parameter, because the two share their embeddings. Other
    architectures have none.

    Example:
        >>> config = ModelConfig(architecture="albert", encoder=EncoderConfig(vocab_size=30000))
        >>> save_config(config, "my_albert.yaml")
    """

    architecture: str
    encoder: EncoderConfig
    description: str = ""
    generator: EncoderConfig | None = None
    pretraining: PretrainingDefaults | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.description, str):
            _fail("description", self.description, "expected a line of text")
        if self.architecture not in architectures.names():
            _fail("architecture", self.architecture, f"allowed: {', '.join(architectures.names())}")
        spec = architectures.get(self.architecture)
        if self.pretraining is not None and not isinstance(self.pretraining, PretrainingDefaults):
            object.__setattr__(self, "pretraining",
                               _from_mapping(PretrainingDefaults, self.pretraining, "pretraining"))
        if not isinstance(self.encoder, EncoderConfig):
            object.__setattr__(self, "encoder", _from_mapping(EncoderConfig, _with_defaults(spec, self.encoder),
                                                              "encoder"))
        if self.generator is not None and not isinstance(self.generator, EncoderConfig):
            object.__setattr__(self, "generator", _from_mapping(EncoderConfig, _with_defaults(spec, self.generator),
                                                                "generator"))
        if self.generator is not None and not spec.generator:
            _fail("generator", self.generator.to_dict(),
                  f"only architecture {', '.join(map(repr, _with_generator()))} has a generator, "
                  f"not {self.architecture!r}")
        if self.generator is not None:
            _check_shared_embeddings(self.encoder, self.generator)
        if self.pretraining is not None and self.pretraining.objectives is not None:
            try:
                spec.objectives_named(self.pretraining.objectives)
            except ValueError as error:
                _fail("pretraining.objectives", self.pretraining.objectives, str(error))
        if spec.validate is not None:
            spec.validate(self)

    @property
    def spec(self) -> "ArchitectureSpec":
        """The `tfbert.architectures.ArchitectureSpec` of `architecture`; models read their family here."""
        return architectures.get(self.architecture)

    def to_dict(self) -> dict[str, Any]:
        data = {"architecture": self.architecture, "encoder": self.encoder.to_dict(), "description": self.description}
        if self.generator is not None:
            data["generator"] = self.generator.to_dict()
        if self.pretraining is not None:
            data["pretraining"] = self.pretraining.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ModelConfig":
        return _from_mapping(cls, data, "")

    def replace(self, **changes: Any) -> "ModelConfig":
        return dataclasses.replace(self, **changes)


def as_model_config(config: ModelConfig | Mapping[str, Any]) -> ModelConfig:
    """`config` itself, or the `ModelConfig` a mapping describes (a saved model's `get_config`).

    Example:
        >>> as_model_config({"architecture": "bert", "encoder": {"vocab_size": 100}}).encoder.hidden_size
        768
    """
    return config if isinstance(config, ModelConfig) else ModelConfig.from_dict(config)


def _with_defaults(spec, encoder: Any) -> Any:
    """An `encoder:` mapping with the family's `encoder_defaults` for the fields it omits."""
    return spec.with_defaults(encoder) if isinstance(encoder, Mapping) else encoder


def _check_shared_embeddings(encoder: EncoderConfig, generator: EncoderConfig) -> None:
    """A generator must match the discriminator's embedding hyper-parameters: the two share one embedding layer."""
    for name in SHARED_EMBEDDING_FIELDS:
        ours, theirs = getattr(generator, name), getattr(encoder, name)
        if ours != theirs:
            _fail(f"generator.{name}", ours, "the generator shares the discriminator's embeddings, so it "
                                             f"must equal encoder.{name} ({theirs!r})")


def _with_generator() -> list[str]:
    return [name for name in architectures.names() if architectures.get(name).generator]


def available_configs() -> list[str]:
    """Names of the configs the registered families ship (`tfbert/families/<family>/configs/`), e.g. `bert_base`."""
    return list(shipped_configs())


def configs_of(architecture: str) -> list[str]:
    """Names of the configs family `architecture` ships (in its package's `configs/`).

    Example:
        >>> ", ".join(configs_of("roberta"))
        'roberta_base, roberta_large, roberta_tiny'
    """
    return [name for name, shipped in shipped_configs().items() if shipped.family == architecture]


def _yaml_problem(error: yaml.YAMLError) -> str:
    """PyYAML's error in one line: the problem and where (its own text spans several lines with a caret)."""
    problem, mark = getattr(error, "problem", None), getattr(error, "problem_mark", None)
    if problem is None:
        return " ".join(str(error).split())
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    context = getattr(error, "context", None)
    return f"{context + ': ' if context else ''}{problem}{where}"


def load_config(name_or_path: str | Path, vocab_size: int | None = None) -> ModelConfig:
    """Loads a shipped config by name (`"albert_base"`) or a YAML file by path.

    `vocab_size` (the tokenizer's) fills in the encoders' `vocab_size`: a shipped config's
    (the paper's) is replaced, a file may leave it out, and a file's own value that disagrees
    raises `ValueError` naming both.

    Example:
        >>> from tfbert.text import load_tokenizer
        >>> tokenizer = load_tokenizer("vocab/")
        >>> load_config("runs/bert/config.yaml", vocab_size=tokenizer.vocabulary_size()).encoder.vocab_size
        30522
    """
    data, source = read_config_mapping(name_or_path)
    try:
        data = data if data is not None else {}
        if vocab_size is not None:
            data = with_vocab_size(data, vocab_size, replace=not _is_path(name_or_path))
        return ModelConfig.from_dict(data)
    except (ValueError, TypeError) as error:
        raise ValueError(f"config {source!r}: {error}") from None


def _is_path(name_or_path: str | Path) -> bool:
    """Whether `load_config` reads `name_or_path` as a file (a YAML suffix or an existing path), not a shipped name."""
    path = Path(name_or_path)
    return path.suffix in (".yaml", ".yml") or path.exists()


def read_config_mapping(name_or_path: str | Path) -> tuple[Any, str]:
    """The parsed YAML of a shipped config or a config file, and where it came from (the shipped file's path in
    its package, `tfbert/families/bert/configs/bert_tiny.yaml`, or the path); `ValueError` for an unknown name or
    invalid YAML, `FileNotFoundError` for a missing file."""
    path = Path(name_or_path)
    if _is_path(name_or_path):
        if path.is_dir():
            raise IsADirectoryError(f"config {str(path)!r} is a folder; give a YAML config file, a Hugging Face "
                                    "config.json or a shipped config name (tfbert configs lists them)")
        if not path.is_file():
            raise FileNotFoundError(f"config file {str(path)!r} does not exist")
        text = path.read_text(encoding="utf-8")
        source = str(path)
    else:
        shipped = shipped_configs()
        if str(name_or_path) not in shipped:
            raise ValueError(
                f"unknown config {str(name_or_path)!r}; shipped configs are {', '.join(shipped)}, "
                "or pass the path of a YAML file"
            )
        text = shipped[str(name_or_path)].file.read_text(encoding="utf-8")
        source = shipped[str(name_or_path)].source
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"config {source!r} is not valid YAML: {_yaml_problem(error)}") from None
    return data, source


def with_vocab_size(data: Any, vocab_size: int, replace: bool = False) -> Any:
    """A config mapping whose encoders (and generator) have `vocab_size`, the tokenizer's.

    A `vocab_size` the mapping gives is kept when it agrees, replaced when `replace` (a shipped
    config's paper size), and otherwise raises `ValueError` naming both sizes.
    """
    if not isinstance(data, Mapping):
        return data
    data = dict(data)
    for part in ("encoder", "generator"):
        encoder = data.get(part)
        if not isinstance(encoder, Mapping):
            continue
        given = encoder.get("vocab_size")
        if given is not None and given != vocab_size and not replace:
            raise ValueError(f"{part}.vocab_size is {given} but the tokenizer has {vocab_size} tokens; leave "
                             "vocab_size out (it comes from the tokenizer) or give the tokenizer this config was made for")
        data[part] = {**encoder, "vocab_size": vocab_size}
    return data


def save_config(config: ModelConfig, path: str | Path) -> None:
    """Writes `config` as YAML that `load_config` reads back unchanged."""
    Path(path).write_text(yaml.safe_dump(config.to_dict(), sort_keys=False), encoding="utf-8")
