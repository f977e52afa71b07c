"""What an architecture is: one frozen `ArchitectureSpec` per family, everything else reads it.

A spec holds the facts that used to be spread over the code base as `if architecture == ...`
branches: the config defaults and checks, the tokenizer and packing layout, the pretraining
objectives, example recipe, optimizer recipe and model factory, the serving tasks, and, per
checkpoint format, how config files and weight names translate. A spec is a leaf of the import
graph: it imports neither `tfbert.config` nor any model, so `config` can read it. It names its
pretraining-model factory as `"module:function"` (imported when a model is built), and its formats
give a checkpoint's encoder config as `EncoderConfig` fields (a dict) that the converters build.

Example:
    >>> from tfbert import architectures
    >>> spec = architectures.get("albert")
    >>> spec.packing_style, spec.default_objectives, spec.optimizer
    ('bert', ('mlm', 'sop'), 'albert')
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol

if TYPE_CHECKING:
    from tfbert.config import EncoderConfig, ModelConfig

TOKENIZER_KINDS = ("wordpiece", "sentencepiece", "byte_bpe")
PACKING_STYLES = ("bert", "roberta")
LM_HEADS = ("transform", "tied")
GENERATOR_EMBEDDINGS = ("shared", "disentangled")
# How `tfbert pretrain` reads most families' data: text documents (`tfbert.data.pretraining_dataset`). A family
# with data of its own (XLM's streams and translation pairs) names its own pipeline in its package.
DOCUMENT_PIPELINE = "tfbert.training.pretraining_inputs:document_pipeline"
# The encoder activations tfbert implements (`tfbert.models.activations`); `EncoderConfig` checks them.
ACTIVATIONS = ("gelu", "gelu_new", "relu", "silu", "tanh")

# The factory of the generic `PretrainingModel` (MLM plus, when asked, NSP or SOP), for the families it pretrains.
MLM_PRETRAINING_MODEL = "tfbert.models.pretraining:build_pretraining_model"

# Model-parallel layouts (`ArchitectureSpec.layout`, read by `tfbert.models.layout` for `--mesh DATAxMODEL` on JAX):
# (regex a variable path must match in full, one mesh axis or None per dimension of the variable). A variable no rule
# matches is replicated. Megatron's split (Shoeybi et al. 2019, https://arxiv.org/abs/1909.08053): the fused query/key/
# value and feed-forward input kernels column-parallel (output dimension on "model"), the attention and feed-forward
# output kernels row-parallel (input dimension on "model"), so each block needs one reduction over the model axis. The
# token table is split on its embedding dimension, not its rows: vocabularies (30522, 50265, 250002) seldom divide by
# the model axis and JAX shards only dimensions the axis divides.
LAYOUT_AXES = ("data", "model", None)
LayoutRule = tuple[str, tuple["str | None", ...]]
ENCODER_LAYOUT: tuple[LayoutRule, ...] = (
    ("embeddings/token_embedding/embeddings", (None, "model")),
    (".*_attention/query_key_value/kernel", (None, "model")),
    (".*_attention/query_key_value/bias", ("model",)),
    (".*_attention/output/kernel", ("model", None)),
    (".*_ffn/(intermediate|gate)/kernel", (None, "model")),
    (".*_ffn/(intermediate|gate)/bias", ("model",)),
    (".*_ffn/output/kernel", ("model", None)),
)
# The masked-LM head's transform into the (split) embedding dimension, before the tied decoder.
MLM_HEAD_LAYOUT: tuple[LayoutRule, ...] = (("mlm_head/transform/kernel", (None, "model")),)
# What a family gets unless its spec says otherwise: the encoder and BERT's masked-LM head.
DEFAULT_LAYOUT = ENCODER_LAYOUT + MLM_HEAD_LAYOUT
# A factorized embedding (ALBERT's, or ELECTRA's and DeBERTa's generator narrower than the embeddings): the projection
# from the split embedding dimension into the hidden size is row-parallel.
EMBEDDING_PROJECTION_LAYOUT: tuple[LayoutRule, ...] = (("embedding_projection/kernel", ("model", None)),)

# (tfbert variable, checkpoint tensor names, function of those arrays giving the variable's value)
Assignment = tuple[Any, tuple[str, ...], Callable[..., Any]]
# build_pretraining_model(config, objectives, seed, dtype) -> keras.Model, or its "module:function" name
PretrainingFactory = Callable[["ModelConfig", tuple[str, ...], "int | None", "str | None"], Any] | str


@dataclasses.dataclass(frozen=True)
class ExampleRecipe:
    """How `tfbert pretrain` makes a family's examples for its default objectives.

    Attributes:
        objective: the example layout of `tfbert.data.pretraining_dataset` (`nsp`, `sop`,
            `full_sentences`, `electra_segments`, ...), or the pipeline's own (`xlm`).
        masking_unit: `MaskedLMMasker`'s unit: `token`, `whole_word`, `ngram` or `span`.
        data_label: the batch key holding the sentence-pair label (`next_sentence_labels`).
        model_label: the label name the pretraining model reads it as (`nsp_labels`).
        extra_inputs: batch keys the model takes besides the encoder inputs and
            `masked_positions` (SpanBERT's span boundaries).
        pipeline: how `tfbert pretrain` reads the run's data, as `"module:function"` (imported when a run
            starts, `tfbert.training.pretraining_inputs.example_pipeline`) or the function:
            `DOCUMENT_PIPELINE` (text documents), or the family's own (XLM's `tlm:`/`mlm:`/`clm:` data,
            `tfbert.families.xlm.data:multilingual_pipeline`).
    """

    objective: str
    masking_unit: str = "token"
    data_label: str | None = None
    model_label: str | None = None
    extra_inputs: tuple[str, ...] = ()
    pipeline: Callable[..., Any] | str = DOCUMENT_PIPELINE

    def __post_init__(self) -> None:
        if isinstance(self.pipeline, str) and not all(self.pipeline.partition(":")[::2]):
            raise ValueError(f"ExampleRecipe.pipeline {self.pipeline!r} is not \"module:function\"")
        if (self.data_label is None) != (self.model_label is None):
            raise ValueError("ExampleRecipe needs both data_label and model_label, or neither")


class CheckpointFormat(Protocol):
    """What every checkpoint format entry of a spec provides (Hugging Face, TF1, keras-hub).

    `read_config` turns the format's config file (parsed JSON) into the encoder config's fields
    (a dict; the converters build the `EncoderConfig`); `write_config` does the reverse;
    `encoder_weights(encoder, prefix, embeddings)` lists every encoder weight with its checkpoint
    names; `head_weights(model)` those of the pretraining model's heads (None: the format holds no
    heads for this family).
    """

    def read_config(self, data: Mapping[str, Any]) -> dict[str, Any]: ...

    def write_config(self, encoder: "EncoderConfig") -> dict[str, Any]: ...

    def encoder_weights(self, encoder: Any, prefix: str, embeddings: bool = True) -> Iterable[Assignment]: ...


@dataclasses.dataclass(frozen=True)
class HuggingFaceFormat:
    """A family's Hugging Face `transformers` checkpoints: `config.json` and the state dict's names.

    Attributes:
        model_type: `config.json`'s `model_type`, written by `huggingface_config`.
        prefix: the encoder's scope in checkpoints with heads (`bert` in `bert.encoder.layer.0...`).
        read_config / write_config: `config.json` (a mapping) to `EncoderConfig` fields (a dict)
            and an `EncoderConfig` back to `config.json`; `write_config` leaves out `model_type` and
            raises `ValueError` for what HF cannot hold.
        encoder_weights: `(encoder, prefix, embeddings) -> assignments` for every encoder weight
            (`embeddings=False` leaves out the embedding layer, which ELECTRA's generator borrows).
        head_weights: `(pretraining_model) -> assignments` of the heads; None when one checkpoint
            cannot hold them, with `no_heads` saying why and what to do instead.
        reads: whether a `config.json` with `model_type` loads as this family (SpanBERT's
            checkpoints are BERT's: it writes `bert` but reads nothing).
        head_objectives: the pretraining objectives a checkpoint with heads was trained with
            (XLM: `clm` when `config.json` is causal); None: the family's defaults.
        token_embedding: the token table's name, used to find `prefix` in a state dict.
        ignored_suffixes: names a checkpoint may hold that no tfbert weight comes from
            (tied decoders), besides those every family has.
        class_prefix: the `transformers` class names' prefix (`Bert` in `BertModel`,
            `BertForSequenceClassification`), written to `config.json`'s `architectures`.
        pretraining_class: the class whose checkpoints `head_weights` names (`BertForPreTraining`).
        pretraining_pooler: whether that class has the encoder's pooler (RoBERTa's masked LM has none).
        classifier_weights: `(encoder, head, pooling) -> assignments` of `<prefix>ForSequenceClassification`
            for a tfbert classifier or regressor whose dense `head` reads `pooling`; `ValueError` for a
            pooling the class does not have; None when no tfbert task model is that class.
        class_names: task class names that are not `class_prefix` + the usual suffix, by suffix
            (XLM: `{"ForQuestionAnswering": "XLMForQuestionAnsweringSimple"}`).
        head_config: `(pretraining_model) -> config.json fields` its heads need (XLM's `causal`), the
            reverse of `head_objectives`.
        pretraining_checkpoints: `(pretraining_model) -> {subfolder: (encoder config, class, assignments)}`
            where one pretraining model is several checkpoints (ELECTRA's generator and discriminator).
        tokenizer_files: the family's own Hugging Face tokenizer files, `{file name: "module:function"}`, where
            `function(folder, settings)` gives the tokenizer of a folder holding that file (DeBERTa's
            `spm.model`); `tfbert.text.huggingface_folders` tries them after the files every family shares.
    """

    model_type: str
    prefix: str
    read_config: Callable[[Mapping[str, Any]], dict[str, Any]]
    write_config: Callable[["EncoderConfig"], dict[str, Any]]
    encoder_weights: Callable[..., Iterable[Assignment]]
    head_weights: Callable[[Any], Iterable[Assignment]] | None = None
    no_heads: str = ""
    reads: bool = True
    head_objectives: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None
    token_embedding: str = "embeddings.word_embeddings.weight"
    ignored_suffixes: tuple[str, ...] = ()
    class_prefix: str = ""
    pretraining_class: str = ""
    pretraining_pooler: bool = True
    classifier_weights: Callable[[Any, Any, str], Iterable[Assignment]] | None = None
    pretraining_checkpoints: Callable[[Any], Mapping[str, tuple["EncoderConfig", str, Iterable[Assignment]]]] | None = None
    head_config: Callable[[Any], Mapping[str, Any]] | None = None
    class_names: Mapping[str, str] = dataclasses.field(default_factory=dict)
    tokenizer_files: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def class_name(self, suffix: str) -> str:
        """The `transformers` class `class_prefix` + `suffix` (`ForTokenClassification`), or the family's own."""
        return self.class_names.get(suffix, f"{self.class_prefix}{suffix}")


def check_layout(name: str, layout: Iterable[LayoutRule]) -> None:
    """`ValueError` for a layout rule that is not `(regex, axes)` with axes among `LAYOUT_AXES`, or a bad regex."""
    for rule in layout:
        pattern, axes = rule if isinstance(rule, tuple) and len(rule) == 2 else (None, None)
        if not isinstance(pattern, str) or not isinstance(axes, tuple) or not set(axes) <= set(LAYOUT_AXES):
            raise ValueError(f"architecture {name!r}: layout rule {rule!r} is not (path regex, axes) with axes "
                             f"among {LAYOUT_AXES}")
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(f"architecture {name!r}: layout rule {pattern!r} is not a regular expression: "
                             f"{error}") from None


@dataclasses.dataclass(frozen=True)
class ArchitectureSpec:
    """Everything tfbert knows about one architecture family (see the module notes).

    Attributes:
        name: the `architecture` of configs (`bert`, `albert`, ...).
        summary: one line for `--help` and docs.
        tokenizer: the tokenizer kind the family is trained with (`wordpiece`,
            `sentencepiece`, `byte_bpe`); also the word-boundary scheme of whole-word masking.
        packing_style: `bert` (`[CLS] a [SEP] b [SEP]`, type ids 0/1) or `roberta`
            (`<s> a </s></s> b </s>`, type ids 0), used by fine-tuning, `tf.data` and export.
        encoder_defaults: `EncoderConfig` fields a config of this family gets when its
            `encoder` (and `generator`) mapping omits them (ALBERT: `sharing: all`).
        validate: `validate(config)` raises `ValueError` for a `ModelConfig` the family
            cannot be (called after the generic checks).
        generator: configs of this family carry a `generator` encoder (ELECTRA).
        objectives: the pretraining objectives its models can train (`mlm`, `nsp`, ...).
        default_objectives: the paper's set, what `tfbert pretrain` trains.
        objective_sets: the sets `tfbert pretrain --objectives` may pick, by the name a user
            writes (`mlm,sop`) to the objectives the model trains; empty: the default set alone.
            ELECTRA's `rtd` names `("mlm", "rtd")` (its generator's MLM comes with it); XLM's
            `tlm` names `("mlm",)` on translation pairs.
        examples: how `tfbert pretrain` makes examples for the default objectives.
        optimizer: the `tfbert.training.optimization` recipe of the paper.
        pretraining_model: `factory(config, objectives, seed, dtype)` building the
            pretraining model, or its name `"module:function"` (the built-in families'
            factories live beside their model classes, `tfbert.families.<family>.models`).
        lm_head: the masked-LM head: `transform` (BERT's dense + LayerNorm before the tied
            decoder) or `tied` (XLM's bare tied projection).
        generator_embeddings: how the generator shares the embeddings (`generator` families):
            `shared` (ELECTRA) or `disentangled` (DeBERTa-v3's gradient-disentangled sharing).
            Each pretraining model class states which heads and sharing it builds and checks the
            spec of the config it is given (`tfbert.models.family`).
        export_tasks: serving tasks its pretraining model exports as (`fill_mask`);
            encoders and task models export for every family.
        package: the family's Python package (`__package__` in its `spec.py`); its shipped
            configs are `<package>/configs/*.yaml` (`tfbert configs`, `load_config(name)`).
        keras_classes: every Keras class the family registers, as `"module:Class"`: `import tfbert`
            lets `keras.models.load_model` find them before their module is imported, and
            `tfbert.models` exports them (`tfbert.models.ElectraPretrainingModel`).
        formats: checkpoint formats by name (`huggingface`; `tf1`, `keras_hub`).
        layout: the model-parallel layout of its pretraining model's variables, `(path regex, mesh axes)`
            rules (`DEFAULT_LAYOUT`; `tfbert.models.layout` makes a `keras.distribution.LayoutMap` of them).
            Every rule matches some variable of the default pretraining model and no variable matches two
            (tests/conformance/test_jax_mesh.py).

    Example:
        >>> spec = ArchitectureSpec(name="tinybert", summary="BERT, renamed", tokenizer="wordpiece",
        ...                         packing_style="bert", objectives=("mlm",), default_objectives=("mlm",),
        ...                         examples=ExampleRecipe("full_sentences"),
        ...                         pretraining_model="tfbert.models.pretraining:build_pretraining_model")
    """

    name: str
    summary: str
    tokenizer: str
    packing_style: str
    objectives: tuple[str, ...]
    default_objectives: tuple[str, ...]
    examples: ExampleRecipe
    pretraining_model: PretrainingFactory
    encoder_defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    objective_sets: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    validate: Callable[["ModelConfig"], None] | None = None
    generator: bool = False
    generator_embeddings: str = "shared"
    lm_head: str = "transform"
    optimizer: str = "bert"
    export_tasks: tuple[str, ...] = ()
    package: str = ""
    keras_classes: tuple[str, ...] = ()
    formats: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    layout: tuple[LayoutRule, ...] = DEFAULT_LAYOUT

    def __post_init__(self) -> None:
        unnamed = [name for name in self.keras_classes if not all(name.partition(":")[::2])]
        if unnamed:
            raise ValueError(f"architecture {self.name!r}: keras_classes {unnamed[0]!r} is not \"module:Class\"")
        check_layout(self.name, self.layout)
        if self.tokenizer not in TOKENIZER_KINDS:
            raise ValueError(f"architecture {self.name!r}: tokenizer {self.tokenizer!r} is not one of "
                             f"{', '.join(TOKENIZER_KINDS)}")
        if self.packing_style not in PACKING_STYLES:
            raise ValueError(f"architecture {self.name!r}: packing_style {self.packing_style!r} is not one of "
                             f"{', '.join(PACKING_STYLES)}")
        for field, value, allowed in (("lm_head", self.lm_head, LM_HEADS),
                                      ("generator_embeddings", self.generator_embeddings, GENERATOR_EMBEDDINGS)):
            if value not in allowed:
                raise ValueError(f"architecture {self.name!r}: {field} {value!r} is not one of {', '.join(allowed)}")
        unknown = [objective for objective in self.default_objectives if objective not in self.objectives]
        if unknown:
            raise ValueError(f"architecture {self.name!r}: default objective {unknown[0]!r} is not among its "
                             f"objectives ({', '.join(self.objectives)})")
        for name, chosen in self.objective_sets.items():
            if not chosen or not set(chosen) <= set(self.objectives):
                raise ValueError(f"architecture {self.name!r}: objective set {name!r} = {chosen} is not among its "
                                 f"objectives ({', '.join(self.objectives)})")

    def with_defaults(self, encoder: Mapping[str, Any]) -> dict[str, Any]:
        """An `encoder:` mapping of a config with this family's `encoder_defaults` filled in."""
        return {**self.encoder_defaults, **encoder}

    def chosen_objectives(self, objectives: Iterable[str] | None) -> tuple[str, ...]:
        """`objectives` as a tuple, or the family's defaults for None (unchecked: see `check_objectives`)."""
        return self.default_objectives if objectives is None else tuple(objectives)

    def check_objectives(self, objectives: Iterable[str] | None) -> tuple[str, ...]:
        """`objectives` as a tuple (the defaults for None); `ValueError` for one the family lacks."""
        chosen = self.chosen_objectives(objectives)
        unknown = [objective for objective in chosen if objective not in self.objectives]
        if unknown or not chosen:
            raise ValueError(f"architecture {self.name!r} trains {', '.join(self.objectives)}; got objectives "
                             f"{', '.join(chosen) or '(none)'}")
        return chosen

    def choosable_objectives(self) -> dict[str, tuple[str, ...]]:
        """The `--objectives` names this family accepts and the objectives each one trains."""
        return dict(self.objective_sets) or {",".join(self.default_objectives): self.default_objectives}

    def objectives_named(self, names: str | Iterable[str]) -> tuple[str, ...]:
        """The objectives `--objectives` names (`"mlm,sop"`, in any order); `ValueError` listing the valid sets.

        Example:
            >>> from tfbert import architectures
            >>> architectures.get("albert").objectives_named("mlm")
            ('mlm',)
        """
        wanted = [name.strip() for name in (names.split(",") if isinstance(names, str) else names) if name.strip()]
        choices = self.choosable_objectives()
        for name, objectives in choices.items():
            if sorted(wanted) == sorted(name.split(",")):
                return objectives
        raise ValueError(f"architecture {self.name!r} cannot train objectives {','.join(wanted) or '(none)'}; "
                         f"choose one of: {' | '.join(choices)}")

    def build_pretraining_model(self, config: "ModelConfig", objectives: Iterable[str] | None = None,
                                seed: int | None = None, dtype: str | None = None):
        """The family's pretraining model for `config` training `objectives` (default: the paper's).

        Example:
            >>> from tfbert import architectures
            >>> from tfbert.config import load_config
            >>> model = architectures.get("albert").build_pretraining_model(load_config("albert_tiny"))
            >>> type(model).__name__, model.pair_objective
            ('PretrainingModel', 'sop')
        """
        return self.pretraining_factory()(config, self.check_objectives(objectives), seed, dtype)

    def pretraining_factory(self) -> Callable[..., Any]:
        """`pretraining_model` as a function: a `"module:function"` name is imported here."""
        if callable(self.pretraining_model):
            return self.pretraining_model
        module, _, function = self.pretraining_model.partition(":")
        return getattr(importlib.import_module(module), function)

    def format(self, name: str):
        """The checkpoint format entry `name`; `ValueError` naming the formats the family has."""
        if name not in self.formats:
            raise ValueError(f"architecture {self.name!r} has no {name} checkpoint format; it has "
                             f"{', '.join(self.formats) or 'none'}")
        return self.formats[name]


@dataclasses.dataclass(frozen=True)
class TF1Format:
    """A family's checkpoints from Google's original TensorFlow 1 code (google-research/bert, albert, electra).

    `tfbert.convert.tf1` reads them with `tf.train.load_checkpoint` and finds the family whose
    `marker` variable the checkpoint holds; the names are those of the original `modeling.py`
    and `run_pretraining.py`.

    Attributes:
        marker: a variable only this family's checkpoints hold (`bert/encoder/layer_0/attention/self/query/kernel`).
        prefix: the encoder's variable scope (`bert/`, `electra/`).
        config_file: the release's JSON config beside the checkpoint (`bert_config.json`).
        read_config / write_config: that JSON (a mapping) to `EncoderConfig` fields and back; `write_config`
            raises `ValueError` for what the original code cannot hold.
        encoder_weights: `(encoder, prefix, embeddings) -> assignments` in the original names.
        head_weights: `(pretraining_model) -> assignments` of everything besides the encoder: the heads
            and, for ELECTRA, the generator.
        config_from_shapes: `(variable shapes) -> config mapping` where the release may come without
            `config_file` (ELECTRA's sizes follow from its shapes); None where the file is required.
        read_generator: `(config mapping) -> EncoderConfig fields` of ELECTRA's generator, or None when the
            checkpoint has none; None for families without one.
        lowercase: whether the release's tokenizer lower-cases; None where the folder name says
            (`uncased_L-12_H-768_A-12`) or the user must.
        head_scopes: variable scopes outside the encoder, not reported as unused when converting
            the encoder alone.

    Example:
        >>> from tfbert import architectures
        >>> architectures.get("bert").format("tf1").config_file
        'bert_config.json'
    """

    marker: str
    prefix: str
    config_file: str
    read_config: Callable[[Mapping[str, Any]], dict[str, Any]]
    write_config: Callable[["EncoderConfig"], dict[str, Any]]
    encoder_weights: Callable[..., Iterable[Assignment]]
    head_weights: Callable[[Any], Iterable[Assignment]]
    config_from_shapes: Callable[[Mapping[str, tuple[int, ...]]], Mapping[str, Any]] | None = None
    read_generator: Callable[[Mapping[str, Any]], "dict[str, Any] | None"] | None = None
    lowercase: bool | None = None
    head_scopes: tuple[str, ...] = ("cls/",)


@dataclasses.dataclass(frozen=True)
class KerasHubFormat:
    """A family's keras-hub backbone presets (`save_to_preset`: `config.json`, `model.weights.h5`, assets).

    `tfbert.convert.keras_hub` loads the backbone with keras-hub and copies its variables by path
    (`transformer_layer_0/self_attention_layer/query/kernel`).

    Attributes:
        backbone_class: the `class_name` in the preset's `config.json` (`BertBackbone`).
        read_config / write_config: the backbone's constructor arguments to `EncoderConfig` fields and back;
            both raise `ValueError` for what the other side cannot hold.
        encoder_weights: `(encoder, prefix, embeddings) -> assignments` in keras-hub variable paths.
        tokenizer_ids_match: whether tfbert's tokenizer of the family's kind, made from the preset's
            vocabulary files, gives keras-hub's ids (XLM-R's shifts SentencePiece ids, as fairseq did).

    Example:
        >>> from tfbert import architectures
        >>> architectures.get("albert").format("keras_hub").backbone_class
        'AlbertBackbone'
    """

    backbone_class: str
    read_config: Callable[[Mapping[str, Any]], dict[str, Any]]
    write_config: Callable[["EncoderConfig"], dict[str, Any]]
    encoder_weights: Callable[..., Iterable[Assignment]]
    tokenizer_ids_match: bool = True
