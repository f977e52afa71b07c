"""Reading the JSON files tfbert writes into its folders, each checked field by field before use
(`tfbert.artifacts.checks`): the manifest `tfbert.json`, `task.json`, `preprocessor.json` and `tfbert_export.json`.

Each reader returns the file's mapping, with every field it knows of the type and in the range tfbert
writes; keys it does not know are kept (a later tfbert may add some within the same `format_version`).

Example:
    >>> read_preprocessor_settings(Path("runs/bert"))["sequence_length"]
    16
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable, Mapping

from tfbert.artifacts.checks import (REWRITE_FOREIGN, FileContentError, integer, inside, json_object, one_of,
                                     only_keys, strings, typed)
from tfbert.artifacts.layout import EXPORT_METADATA_FILE, PREPROCESSOR_FILE, TASK_FILE, TOKENIZER_CONFIG_FILE

MAX_SEQUENCE_LENGTH = 65_536   # the longest `--sequence-length` (`tfbert.commands.flag_types`) and file field
MAX_VOCABULARY_SIZE = 4_194_304   # the most entries TF-Text's vocabulary tables hold
MAX_STEP = 2**62
PACKING_STYLES = ("bert", "roberta")
MASKING_FIELDS = {"max_predictions": "int", "unit": "str", "word_scheme": "str", "selection_rate": "rate",
                  "mask_token_rate": "rate", "random_token_rate": "rate"}
TASK_STRINGS = ("task", "metric", "pooling", "loss", "command")
TASK_LISTS = ("labels", "label_names", "tag_names", "heads", "languages")
TASK_FLAGS = ("pair", "normalize")


def foreign(check: Callable) -> Callable:
    """`check` with the remedy of a file another library wrote (`REWRITE_FOREIGN`)."""
    @functools.wraps(check)
    def checked(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except FileContentError as error:
            raise error.with_remedy(REWRITE_FOREIGN) from None
    return checked


def check_task_fields(task: Mapping[str, Any], path: Path, where: str = "") -> None:
    """The fields of a task mapping (`task.json`, the manifest's `task`): names, label lists, length, flags."""
    prefix = f"{where}." if where else ""
    view = {f"{prefix}{key}": value for key, value in task.items()}
    for key in TASK_STRINGS:
        typed(view, prefix + key, path, (str,), "a string")
    for key in TASK_LISTS:
        strings(view, prefix + key, path)
    for key in TASK_FLAGS:
        typed(view, prefix + key, path, (bool,), "true or false")
    integer(view, prefix + "max_length", path, 1, MAX_SEQUENCE_LENGTH, required=False)
    score_range = typed(view, prefix + "score_range", path, (list,), "[LOW, HIGH]")
    if score_range is not None and (len(score_range) != 2 or not all(
            isinstance(value, (int, float)) and not isinstance(value, bool) for value in score_range)):
        raise FileContentError(path, prefix + "score_range", f"is {score_range!r}, expected [LOW, HIGH]")


def read_task_file(folder: Path) -> dict[str, Any]:
    """`folder/task.json` (a model dir's), checked; `{}` where there is none."""
    path = folder / TASK_FILE
    if not path.is_file():
        return {}
    task = json_object(path)
    typed(task, "task", path, (str,), "a task name such as classification", required=True)
    check_task_fields(task, path)
    return task


def check_preprocessor_fields(settings: Mapping[str, Any], path: Path) -> None:
    """The fields of `preprocessor.json` (see `Preprocessor.get_config`)."""
    typed(settings, "architecture", path, (str,), "a family name such as bert")
    integer(settings, "sequence_length", path, 2, MAX_SEQUENCE_LENGTH)
    one_of(settings, "packing_style", path, PACKING_STYLES)
    typed(settings, "truncation", path, (str,), "a truncation rule such as longest_first")
    masking = typed(settings, "masking", path, (dict,), "a mapping of masking settings, or null")
    if masking is None:
        return
    only_keys(masking, path, tuple(MASKING_FIELDS), "masking")
    view = {f"masking.{key}": value for key, value in masking.items()}
    integer(view, "masking.max_predictions", path, 1, MAX_SEQUENCE_LENGTH, required=False)
    for key, kind in MASKING_FIELDS.items():
        if kind == "str":
            typed(view, f"masking.{key}", path, (str,), "a string")
        elif kind == "rate" and f"masking.{key}" in view:
            rate = typed(view, f"masking.{key}", path, (int, float), "a number from 0 to 1", required=True)
            if not 0 <= rate <= 1:
                raise FileContentError(path, f"masking.{key}", f"is {rate!r}, expected a number from 0 to 1")


def read_preprocessor_settings(folder: Path) -> dict[str, Any]:
    """`folder/preprocessor.json`, checked (`FileContentError` naming the field)."""
    path = folder / PREPROCESSOR_FILE
    settings = json_object(path)
    check_preprocessor_fields(settings, path)
    return settings


def read_export_metadata(folder: Path) -> dict[str, Any]:
    """`folder/tfbert_export.json` (a SavedModel's `assets.extra/`, a TF Lite export's folder), checked; `{}`
    where there is none."""
    path = folder / EXPORT_METADATA_FILE
    if not path.is_file():
        return {}
    metadata = json_object(path)
    typed(metadata, "task", path, (str,), "the served task such as classification", required=True)
    strings(metadata, "inputs", path, required=True)
    for key in ("label_names", "tag_names", "languages", "signatures"):
        strings(metadata, key, path)
    integer(metadata, "sequence_length", path, 2, MAX_SEQUENCE_LENGTH, required=False)
    typed(metadata, "pair_preprocess", path, (bool,), "true or false")
    integer(metadata, "xla_max_batch", path, 1, 1 << 20, required=False)
    typed(metadata, "quantization", path, (str,), "a quantization name such as dynamic, or null")
    return metadata


def check_tokenizer_settings(settings: Mapping[str, Any], path: Path) -> None:
    """The fields of a tokenizer folder's `tokenizer_config.json` that tfbert reads (its own and Hugging Face's)."""
    typed(settings, "class", path, (str,), "a tokenizer class name such as WordPieceTokenizer")
    for key in ("lowercase", "keep_hangul", "do_lower_case", "keep_accents", "add_prefix_space"):
        typed(settings, key, path, (bool,), "true or false")
    special = typed(settings, "special_tokens", path, (dict,), "a mapping of roles (cls, sep, pad, ...) to tokens")
    if special is not None:
        for role, token in special.items():
            if token is not None and not isinstance(token, str):
                raise FileContentError(path, f"special_tokens.{role}", f"is {token!r}, expected a token (a string)")


def read_tokenizer_settings(folder: Path) -> dict[str, Any]:
    """`folder/tokenizer_config.json`, checked; `{}` where there is none."""
    path = folder / TOKENIZER_CONFIG_FILE
    if not path.is_file():
        return {}
    settings = json_object(path)
    check_tokenizer_settings(settings, path)
    return settings


@foreign
def read_huggingface_tokenizer_state(path: Path) -> dict[str, Any]:
    """A Hugging Face `tokenizer.json`, its `model` checked: `vocab` a mapping of tokens to ids (WordPiece, BPE)
    or a list of `[piece, score]` (Unigram), `merges` a list, ids whole numbers."""
    state = json_object(path)
    model = typed(state, "model", path, (dict,), "the tokenizer model (a mapping with type and vocab)", required=True)
    view = {f"model.{key}": value for key, value in model.items()}
    kind = typed(view, "model.type", path, (str,), "WordPiece, Unigram or BPE")
    if kind == "Unigram":
        vocab = typed(view, "model.vocab", path, (list,), "a list of [piece, score]", required=True)
        if not all(isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) for entry in vocab):
            raise FileContentError(path, "model.vocab", "holds an entry that is not [piece, score]")
    elif kind is not None:
        vocab = typed(view, "model.vocab", path, (dict,), "a mapping of tokens to ids", required=True)
        if not all(isinstance(index, int) and not isinstance(index, bool) and index >= 0 for index in vocab.values()):
            raise FileContentError(path, "model.vocab", "maps a token to something other than an id (a whole number)")
        ids, added = set(vocab.values()), len(state.get("added_tokens") or ()) if isinstance(state.get(
            "added_tokens"), list) else 0
        if len(ids) < len(vocab) or (vocab and max(ids) >= len(vocab) + added):
            raise FileContentError(path, "model.vocab", f"gives {len(vocab)} tokens ids that are not 0 to "
                                   f"{len(vocab) - 1}, each once")
        if kind == "BPE":
            typed(view, "model.merges", path, (list,), "a list of merges", required=True)
    for key in ("unk_token", "continuing_subword_prefix"):
        typed(view, f"model.{key}", path, (str,), "a string")
    integer(view, "model.max_input_chars_per_word", path, 1, MAX_ID, required=False)
    for part in ("normalizer", "pre_tokenizer"):
        step = typed(state, part, path, (dict,), "a mapping with a type")
        if step is not None:
            inner = {f"{part}.{key}": value for key, value in step.items()}
            typed(inner, f"{part}.type", path, (str,), "a step type such as BertNormalizer")
            for key in ("lowercase", "strip_accents", "clean_text", "handle_chinese_chars", "add_prefix_space"):
                typed(inner, f"{part}.{key}", path, (bool,), "true or false")
    if len(model.get("vocab") or ()) > MAX_VOCABULARY_SIZE:
        raise FileContentError(path, "model.vocab", f"has {len(model['vocab']):,} entries, more than the "
                               f"{MAX_VOCABULARY_SIZE:,} TF-Text's tables hold", "use a smaller vocabulary")
    added = typed(state, "added_tokens", path, (list,), "a list of added tokens")
    if added is not None and not all(isinstance(entry, dict) and isinstance(entry.get("content"), str)
                                     and isinstance(entry.get("id"), int) for entry in added):
        raise FileContentError(path, "added_tokens", "holds an entry without a content string and an id")
    return state


# The fields of a Hugging Face `config.json` that tfbert reads or writes, by the type they hold (absent or null: not
# given). The family's format entry then reads the sizes into an `EncoderConfig`, which bounds them.
HUGGINGFACE_INTEGERS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                        "max_position_embeddings", "type_vocab_size", "pad_token_id", "bos_token_id", "eos_token_id",
                        "embedding_size", "num_hidden_groups", "inner_group_num", "n_langs", "position_buckets")
# DeBERTa's `max_relative_positions`: -1 (transformers' default) means "max_position_embeddings".
HUGGINGFACE_SIGNED_INTEGERS = ("max_relative_positions",)
HUGGINGFACE_NUMBERS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "initializer_range", "layer_norm_eps",
                       "classifier_dropout")
HUGGINGFACE_STRINGS = ("hidden_act", "dtype", "torch_dtype", "problem_type", "position_embedding_type",
                       "transformers_version", "_name_or_path")
HUGGINGFACE_TOKEN_SETTINGS = ("cls_token", "sep_token", "pad_token", "mask_token", "unk_token", "bos_token",
                              "eos_token")
MAX_ID = 2**31 - 1   # ids and sizes are int32 in every tensor tfbert builds


@foreign
def check_huggingface_config(config: Mapping[str, Any], path: Path) -> None:
    """The fields of a Hugging Face `config.json` tfbert reads, by type (see `HUGGINGFACE_INTEGERS`, ...)."""
    typed(config, "model_type", path, (str,), "a model type such as bert", required=True)
    for key in HUGGINGFACE_INTEGERS:
        integer(config, key, path, 0, MAX_ID, required=False)
    for key in HUGGINGFACE_SIGNED_INTEGERS:
        integer(config, key, path, -1, MAX_ID, required=False)
    for key in HUGGINGFACE_NUMBERS:
        if typed(config, key, path, (int, float), "a number") is not None and config[key] < 0:
            raise FileContentError(path, key, f"is {config[key]!r}, expected a number of at least 0")
    for key in HUGGINGFACE_STRINGS:
        typed(config, key, path, (str,), "a string")
    strings(config, "architectures", path)
    integer(config, "num_labels", path, 1, 1_000_000, required=False)
    id2label = typed(config, "id2label", path, (dict,), "a mapping of ids to label names")
    if id2label is not None and not all(isinstance(name, str) for name in id2label.values()):
        raise FileContentError(path, "id2label", "maps an id to something other than a label name (a string)")
    label2id = typed(config, "label2id", path, (dict,), "a mapping of label names to ids")
    if label2id is not None and not all(isinstance(index, int) and not isinstance(index, bool) and 0 <= index <= MAX_ID
                                        for index in label2id.values()):
        raise FileContentError(path, "label2id", "maps a label to something other than an id (a whole number)")


@foreign
def check_huggingface_tokenizer_settings(settings: Mapping[str, Any], path: Path) -> None:
    """The fields of a Hugging Face `tokenizer_config.json` or `special_tokens_map.json` tfbert reads."""
    for key in HUGGINGFACE_TOKEN_SETTINGS:
        token = settings.get(key)
        if token is not None and not isinstance(token, str) and not (
                isinstance(token, dict) and isinstance(token.get("content"), str)):
            raise FileContentError(path, key, f"is {token!r}, expected a token (a string or an AddedToken mapping)")
    for key in ("do_lower_case", "strip_accents", "keep_accents", "add_prefix_space", "tokenize_chinese_chars"):
        typed(settings, key, path, (bool,), "true or false")
    for key in ("tokenizer_class", "backend"):
        typed(settings, key, path, (str,), "a string")
    strings(settings, "model_input_names", path)
    integer(settings, "model_max_length", path, 1, 1 << 128, required=False)


def check_label_count(metadata: Mapping[str, Any], folder: Path, classes: int | None) -> None:
    """Refuses `label_names` that do not name each of the model's `classes` outputs."""
    names = metadata.get("label_names")
    if names is not None and classes is not None and len(names) != classes:
        raise FileContentError(folder / EXPORT_METADATA_FILE, "label_names",
                               f"names {len(names)} labels but the model has {classes} classes")


def check_manifest_fields(manifest: Mapping[str, Any], path: Path, kinds: tuple[str, ...]) -> None:
    """The fields of a manifest (`tfbert.artifacts.manifest`), its `format_version` and `kind` aside."""
    typed(manifest, "family", path, (str,), "a family name such as bert")
    config = typed(manifest, "config", path, (dict,), "the encoder config (a mapping)")
    if config is not None:
        check_encoder_config(config, path, "config")
    fields = typed(manifest, "preprocessor", path, (dict,), "a mapping")
    if fields is not None:
        view = {f"preprocessor.{key}": value for key, value in fields.items()}
        for key in ("tokenizer", "packing_style"):
            typed(view, f"preprocessor.{key}", path, (str,), "a string")
        one_of(view, "preprocessor.packing_style", path, PACKING_STYLES, required=False)
        typed(view, "preprocessor.lowercase", path, (bool,), "true or false")
        integer(view, "preprocessor.vocabulary_size", path, 1, MAX_VOCABULARY_SIZE, required=False)
        integer(view, "preprocessor.sequence_length", path, 2, MAX_SEQUENCE_LENGTH, required=False)
    task = typed(manifest, "task", path, (dict,), "a mapping")
    if task is not None:
        check_task_fields(task, path, "task")
    provenance = typed(manifest, "provenance", path, (dict,), "a mapping")
    if provenance is not None:
        view = {f"provenance.{key}": value for key, value in provenance.items()}
        for key in ("source", "source_kind", "tfbert_version", "command"):
            typed(view, f"provenance.{key}", path, (str,), "a string")
        for key in ("source_step", "step"):
            integer(view, f"provenance.{key}", path, 0, MAX_STEP, required=False)
        precision = typed(view, "provenance.precision", path, (dict,), "a mapping of policy and reason")
        for key in ("policy", "reason"):
            typed({f"provenance.precision.{key}": (precision or {}).get(key)}, f"provenance.precision.{key}", path,
                  (str,), "a string")
        if provenance.get("model_file") is not None:
            inside(path.parent, provenance["model_file"], path, "provenance.model_file")


def check_encoder_config(config: Mapping[str, Any], path: Path, field: str) -> None:
    """An encoder config mapping as `tfbert.config.EncoderConfig` takes it (types and bounds)."""
    # Deferred (start-up): `tfbert.config` imports PyYAML, kept out of `tfbert --help`
    from tfbert.config import EncoderConfig

    try:
        EncoderConfig.from_dict(config)
    except (TypeError, ValueError) as error:
        problem = str(error).removeprefix("invalid config: ")
        raise FileContentError(path, field, f"is not a valid encoder config ({problem})") from None
