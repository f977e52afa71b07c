"""`pretrain`: a config, a tokenizer and a corpus in, a trained model and its encoder out.

This is the Python API behind `tfbert pretrain`: it builds each architecture's
input pipeline (tokenize, pack, mask, pair) with `tfbert.data`, the matching
pretraining model, and runs the resumable `model.fit` driver. What differs by
architecture comes from its `tfbert.architectures` spec: the example recipe
(`spec.examples`), the packing style, the optimizer recipe and the model factory.

Built in: `bert` (MLM + NSP), `albert` (MLM + SOP), `roberta` (MLM, full
sentences), `electra` (generator MLM + discriminator RTD; consecutive text as one
segment or two in order), `spanbert` (span masking + SBO, one segment, full
sentences), `xlmr` (RoBERTa's recipe with a SentencePiece vocabulary) and `xlm`
(`data="tlm:SRC,TGT"` aligned files, `"mlm:A,B,..."` or `"clm:A,B,..."` one corpus
per language, language ids in the order given; see `xlm_examples`).

Example:
    >>> from tfbert.training.pretraining import pretrain
    >>> model = pretrain("bert_tiny", tokenizer="vocab/", data=["botchan.txt"], model_dir="runs/bert",
    ...                  steps=2, batch_size=2, sequence_length=16, max_predictions=2, seed=0)
    >>> type(model).__name__           # runs/bert holds this run already: the call resumes at step 2 of 2
    'PretrainingModel'
    >>> Path("runs/bert/encoder/encoder.keras").is_file()    # with checkpoints, config.yaml, tokenizer/
    True
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import keras
import tensorflow as tf

from tfbert import architectures
from tfbert.architectures import ArchitectureSpec
from tfbert.artifacts.checkpoints import newest_checkpoint
from tfbert.config import ModelConfig, PretrainingDefaults, load_config, read_config_mapping, save_config
from tfbert.data import (line_by_line_dataset, pretraining_dataset, text_line_documents, tfds_documents,
                         tfrecord_documents)
from tfbert.distribute import shard_for_input_pipeline
from tfbert.distribute.precision import PrecisionChoice
from tfbert.data.input_checks import check_text_files
from tfbert.data.masking import mask_dataset
from tfbert.data.preprocessor import MaskingSettings, Preprocessor
from tfbert.data.pretraining import shuffled
from tfbert.data.readers import text_lines
from tfbert.data.service import check_job_name, named_service_errors, run_job_name, wait_for_service
from tfbert.text.loading import as_tokenizer
from tfbert.text.base import Tokenizer
from tfbert.training.driver import train
from tfbert.training.no_data import NoTrainingData, no_data_message
from tfbert.training.run_precision import kept_precision, precision_record
from tfbert.training.initialization import InitSource, added_token_pieces, initialize_from, read_source
from tfbert.training.optimization import create_optimizer
from tfbert.training.settings import TrainingSettings, training_settings

logger = logging.getLogger(__name__)

MODEL_INPUTS = ("token_ids", "segment_ids", "padding_mask", "masked_positions")

if TYPE_CHECKING:
    from tfbert.artifacts import Artifact


def architecture_of(config: ModelConfig) -> ArchitectureSpec:
    """The registered family of `config` (`tfbert.architectures`): its example recipe, packing, optimizer."""
    return architectures.get(config.architecture)


def split_inputs_and_labels(batch: dict[str, tf.Tensor], config: ModelConfig,
                            objectives: Sequence[str] | None = None) -> tuple[dict, dict]:
    """A `tfbert.data` batch as the `(inputs, labels)` pair that `PretrainingModel.fit` takes.

    The sentence-pair label is left out when `objectives` (default: the architecture's) do not train it.
    """
    spec = architecture_of(config)
    recipe = spec.examples
    inputs = {name: batch[name] for name in MODEL_INPUTS + recipe.extra_inputs}
    labels = {"masked_ids": batch["masked_ids"], "masked_weights": batch["masked_weights"]}
    trained = spec.chosen_objectives(objectives)
    if recipe.data_label and recipe.model_label.removesuffix("_labels") in trained:
        labels[recipe.model_label] = batch[recipe.data_label]
    return inputs, labels


def documents_from(data: str | Sequence[str] | tf.data.Dataset) -> tf.data.Dataset:
    """Documents (1-D string tensors of sentences) from `data`.

    `data` is a `tf.data.Dataset` of documents (returned as is), `tfds:NAME` (`tfds_documents`),
    `corpus:web` (the bundled corpus), or files, local or in a bucket (`gs://...`), with glob
    patterns: text (a sentence a line, blank lines between documents), `.gz` text, or
    `.tfrecord` files of raw document strings (`tfrecord_documents`).

    Example:
        >>> documents = documents_from("corpus:web")
        >>> held_out, train = documents.take(20), documents.skip(20)
        >>> next(iter(held_out))[0].numpy()     # a chapter of the bundled World English Bible, a line per sentence
        b'In the beginning, God created the heavens and the earth.'
    """
    if isinstance(data, tf.data.Dataset):
        return data
    if not isinstance(data, str) and len(data) == 1 and str(data[0]).startswith(("tfds:", "corpus:")):
        data = str(data[0])   # ["corpus:web"], as a command line passes it
    if isinstance(data, str) and data.startswith("tfds:"):
        return tfds_documents(data[len("tfds:"):])
    if isinstance(data, str) and data.startswith("corpus:"):
        import tfbert.corpus
        return tfbert.corpus.documents(tfbert.corpus.path(data[len("corpus:"):] or "web"))
    files = [data] if isinstance(data, str) else list(data)
    expanded = [match for pattern in files for match in (tf.io.gfile.glob(pattern) or [pattern])]
    missing = [path for path in expanded if not tf.io.gfile.exists(path)]
    if missing:
        raise FileNotFoundError(f"corpus file {missing[0]!r} does not exist")
    if expanded and all(path.endswith(".gz") for path in expanded):
        import tfbert.corpus
        return tfbert.corpus.documents(expanded)
    if expanded and all(path.endswith((".tfrecord", ".tfrecords")) for path in expanded):
        return tfrecord_documents(expanded)
    check_text_files(expanded)
    return text_line_documents(expanded)


def pretraining_examples(
    config: ModelConfig,
    tokenizer: Tokenizer,
    documents: tf.data.Dataset,
    *,
    batch_size: int,
    sequence_length: int = 128,
    max_predictions: int = 20,
    seed: int | None = None,
    shuffle_buffer: int = 1000,
    objectives: Sequence[str] | None = None,
    line_by_line: bool = False,
    repeat: bool = False,
) -> tf.data.Dataset:
    """`(inputs, labels)` batches for `config`'s architecture, masked anew on every pass.

    Examples are shuffled with a buffer of `shuffle_buffer` before batching (0: document
    order; see `pretraining_dataset`). `objectives` (default: the architecture's) decide
    whether the sentence-pair label comes along (ALBERT with `("mlm",)` has none).
    `line_by_line=True` reads `documents` as text lines (`lines_from`) and makes one example per
    line (`line_by_line_dataset`), for MLM-only runs. `repeat=True` passes over `documents` again and
    again, without end (each pass in `documents`' own order: reshuffled, if it shuffles), as training
    for a number of steps needs; give it the documents of one pass rather than repeating them (see
    `tfbert.data.pair_examples`).

    Example:
        >>> from tfbert.text import load_tokenizer
        >>> batches = pretraining_examples(load_config("bert_tiny"), load_tokenizer("vocab/"), lines_from("corpus.txt"),
        ...                                batch_size=32, sequence_length=16, max_predictions=2, objectives=("mlm",),
        ...                                line_by_line=True)
        >>> inputs, labels = next(iter(batches))
        >>> tuple(inputs["token_ids"].shape), tuple(labels)
        ((32, 16), ('masked_ids', 'masked_weights'))
    """
    recipe = architecture_of(config).examples
    if recipe.source != "documents" and not line_by_line:
        raise ValueError(f"{config.architecture} examples come from {recipe.source} data, not documents: use "
                         "xlm_examples, or pretrain with data='tlm:SRC,TGT', 'mlm:A,B' or 'clm:A,B'")
    preprocessor = pretraining_preprocessor(config, tokenizer, sequence_length, max_predictions)
    batching = dict(packer=preprocessor.packer, masker=preprocessor.masker, batch_size=batch_size, seed=seed,
                    shuffle_buffer=shuffle_buffer)
    if line_by_line:
        examples = line_by_line_dataset(documents.repeat() if repeat else documents, tokenizer.tokenize, **batching)
    else:
        examples = pretraining_dataset(documents, tokenizer.tokenize, objective=recipe.objective, repeat=repeat,
                                       **batching)
    return examples.map(lambda batch: split_inputs_and_labels(batch, config, objectives)).prefetch(tf.data.AUTOTUNE)


def lines_from(data: str | Sequence[str] | tf.data.Dataset) -> tf.data.Dataset:
    """The lines of `data` for `--line-by-line`: text files (`.gz` too, glob patterns) or a dataset of strings.

    Example:
        >>> next(iter(lines_from(["corpus.txt"]))).numpy()
        b"\xef\xbb\xbfProject Gutenberg's Botchan (Master Darling), by Kin-nosuke Natsume"
    """
    if isinstance(data, tf.data.Dataset):
        return data
    files = [data] if isinstance(data, str) else [str(path) for path in data]
    if any(path.startswith(("tfds:", "corpus:")) for path in files):
        raise ValueError("--line-by-line reads text files (a line an example), not tfds: or corpus: data")
    expanded = [match for pattern in files for match in (tf.io.gfile.glob(pattern) or [pattern])]
    missing = [path for path in expanded if not tf.io.gfile.exists(path)]
    if missing:
        raise FileNotFoundError(f"corpus file {missing[0]!r} does not exist")
    return text_lines(expanded)


def pretraining_preprocessor(config: ModelConfig, tokenizer: Tokenizer, sequence_length: int = 128,
                             max_predictions: int = 20) -> Preprocessor:
    """The run's `Preprocessor`: the architecture's packing style, masking as its example recipe says.

    Example:
        >>> from tfbert.text import WordPieceTokenizer
        >>> pretraining_preprocessor(load_config("albert_tiny"), WordPieceTokenizer("vocab.txt")).masking.unit
        'ngram'
    """
    spec = architecture_of(config)
    masking = MaskingSettings(max_predictions, unit=spec.examples.masking_unit, word_scheme=spec.tokenizer)
    return Preprocessor.for_architecture(spec.name, tokenizer, sequence_length, masking=masking)


def parse_xlm_data(data: str | Sequence[str]) -> tuple[str, list[str]]:
    """`"tlm:en.txt,es.txt"` -> `("tlm", ["en.txt", "es.txt"])`; also `mlm:`, `clm:` and `tlm:pairs.tsv`."""
    spec = data if isinstance(data, str) else ",".join(data)
    objective, _, files = spec.partition(":")
    if objective not in ("tlm", "mlm", "clm") or not files:
        raise ValueError(
            f"XLM data must be 'tlm:SRC,TGT' (aligned files), 'tlm:PAIRS.tsv', 'mlm:A,B,...' or 'clm:A,B,...' "
            f"(one corpus per language, language ids in that order); got {spec!r}")
    paths = [path for path in files.split(",") if path]
    missing = [path for path in paths if not tf.io.gfile.exists(path)]
    if missing:
        raise FileNotFoundError(f"corpus file {missing[0]!r} does not exist")
    if objective == "tlm" and len(paths) not in (1, 2):
        raise ValueError(f"tlm needs two aligned files or one TSV file; got {len(paths)} files")
    return objective, paths


def xlm_examples(
    config: ModelConfig,
    tokenizer: Tokenizer,
    data: str | Sequence[str],
    *,
    batch_size: int,
    sequence_length: int = 128,
    max_predictions: int = 20,
    alpha: float = 0.5,
    seed: int | None = None,
    input_context: tf.distribute.InputContext | None = None,
) -> tf.data.Dataset:
    """XLM batches for `XLMPretrainingModel`: `(inputs, labels)` for TLM/MLM, inputs only for CLM.

    - `tlm:SRC,TGT` (or `tlm:PAIRS.tsv`): aligned translation pairs, languages 0 and 1,
      both sides masked, positions restarting at the second sentence.
    - `mlm:A,B,...` / `clm:A,B,...`: a text corpus per language (a sentence a line, blank
      lines between documents; `.gz` read as gzip), language ids 0, 1, ... in that order;
      streams of `sequence_length` tokens, languages sampled with probabilities ∝ p_i^alpha
      over their line counts (alpha 0.5 as XLM; XLM-R used 0.3).
    """
    from tfbert.data import multilingual
    from tfbert.data.parallel import count_lines, parallel_text_lines, parallel_tsv

    objective, paths = parse_xlm_data(data)
    num_languages = 2 if objective == "tlm" else len(paths)
    if num_languages > max(config.encoder.num_languages, 1):
        raise ValueError(f"{num_languages} languages but the config has num_languages={config.encoder.num_languages}")
    masker = pretraining_preprocessor(config, tokenizer, sequence_length, max_predictions).masker
    if objective == "tlm":
        pairs = parallel_tsv(paths[0]) if len(paths) == 1 else parallel_text_lines(*paths)
        if input_context is not None:
            pairs = pairs.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        batches = multilingual.tlm_dataset(pairs.repeat(), tokenizer, masker=masker, sequence_length=sequence_length,
                                           batch_size=batch_size, seed=seed, shuffle_buffer=10_000)
    else:
        streams = []
        for language_id, path in enumerate(paths):
            documents = documents_from(path)
            if input_context is not None:
                documents = shard_for_input_pipeline(documents, input_context)
            streams.append(multilingual.stream_examples(documents.repeat(), tokenizer, language_id=language_id,
                                                        sequence_length=sequence_length))
        sizes = [count_lines(path) if not path.endswith(".gz") else 1 for path in paths]
        mixed = multilingual.sample_languages(streams, sizes, alpha=alpha, seed=seed)
        batches = mixed.shuffle(1000, seed=seed).batch(batch_size, drop_remainder=True)
        if objective == "mlm":
            batches = mask_dataset(batches, masker, seed=seed)
    model_objective = "clm" if objective == "clm" else "mlm"
    return batches.map(lambda batch: multilingual.split_xlm_batch(batch, model_objective)).prefetch(tf.data.AUTOTUNE)


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


def pretrain(
    config: str | ModelConfig | None = None,
    *,
    tokenizer: str | Path | Tokenizer | None = None,
    data: str | Sequence[str] | tf.data.Dataset,
    model_dir: str,
    settings: TrainingSettings | None = None,
    init_from: str | Path | None = None,
    objectives: str | Sequence[str] | None = None,
    sequence_length: int = 128,
    max_predictions: int = 20,
    optimizer_recipe: str | None = None,
    shuffle_buffer: int = 1000,
    line_by_line: bool = False,
    data_service: str | None = None,
    data_service_job: str | None = None,
    callbacks: list[keras.callbacks.Callback] | None = None,
    **setting_changes: Any,
) -> keras.Model:
    """Pretrains any registered architecture (`config.architecture`) and saves the encoder.

    `data`: text files (a sentence a line, blank lines between documents; `.gz` too), `.tfrecord`
    files of raw documents, `tfds:NAME`, `corpus:web` (the bundled corpus), a `tf.data.Dataset` of
    documents (`documents_from`), or for XLM `tlm:SRC,TGT`, `mlm:A,B,...`, `clm:A,B,...`
    (`xlm_examples`). Files may be in a bucket (`gs://`). Documents, then examples, are shuffled
    with buffers of `shuffle_buffer` (seeded by `seed`; 0 keeps corpus order). Documents stream:
    long ones are cut into windows (`tfbert.data.readers.DOCUMENT_WINDOW` sentences), so the
    start costs the same at any corpus size. `line_by_line=True` makes each line of the text
    files one example (Hugging Face's `LineByLineTextDataset`; MLM-type objectives only).
    `data_service="grpc://HOST:PORT"` runs the input pipeline on a tf.data service cluster
    (`tfbert.data.service`), in the job the run records in `model_dir` (`run_job_name`), or in
    `data_service_job` for runs that share one epoch; a cluster that does not answer within the
    bounded wait of `wait_for_service` ends the call with one line.

    `init_from` starts from an existing model's weights instead of random ones (see
    `tfbert.training.initialization.read_source`): its config and tokenizer are used where
    `config` and `tokenizer` are None, its heads are kept where the objectives have them, and a
    tokenizer extending its vocabulary grows the token table. `objectives` picks among the
    architecture's sets (`"mlm"`, `"mlm,sop"`; `ArchitectureSpec.objective_sets`); default: the
    config's `pretraining.objectives`, else the paper's.

    `settings` (a `tfbert.training.settings.TrainingSettings`; its fields also as keyword
    arguments, which override it) says how to train: `steps` (required) and `batch_size` (the
    global batch), `learning_rate` and `warmup_steps` or `warmup_fraction` (default: the config's
    `pretraining` values, else the recipe's), `strategy`, `precision` (`"auto"`: bfloat16 where the
    hardware runs it faster, see `tfbert.distribute.pick_precision`; recorded in the run's manifest and kept
    when it resumes, `tfbert.training.run_precision`), `jit_compile` (`"auto"`
    compiles with XLA except for mirrored CPU replicas and CPU runs under `CPU_XLA_MIN_STEPS`
    steps), `steps_per_execution` (TPU: 100 or more), `checkpoint_every`, `seed`, and `verbose`
    (`"auto"`: a line every `log_every` steps when stdout is not a terminal, Keras' progress bar on a
    terminal).

    Rerunning the same call resumes from the newest checkpoint in `model_dir`. At the end it holds
    `encoder/encoder.keras`, `config.yaml` (with the objectives trained), `preprocessor.json` and
    `tokenizer/`, which fine-tuning and export read.

    Example:
        >>> pretrain(init_from="albert-base-v2/", objectives="mlm", data=["domain.txt"], model_dir="runs/further",  # doctest: +SKIP
        ...          settings=TrainingSettings(steps=10_000, batch_size=64))  # doctest: +SKIP
    """
    run = training_settings(settings, setting_changes)
    if run.steps is None:
        raise ValueError("pretrain needs the number of steps: TrainingSettings(steps=...) or steps=...")
    steps, seed = run.steps, run.seed
    warmup_steps = run.warmup_steps if run.warmup_steps is not None or run.warmup_fraction is None else \
        int(round(run.warmup_fraction * steps))
    if shuffle_buffer < 0:
        raise ValueError(f"shuffle_buffer must be 0 (corpus order) or a positive buffer size, got {shuffle_buffer}")
    source = read_source_for(init_from, model_dir)
    tokenizer = run_tokenizer(tokenizer, source)
    config = run_config(config, tokenizer, source)
    check_sequence_length(config, sequence_length)
    recipe_name, learning_rate, warmup_steps = optimizer_settings(config, steps, optimizer_recipe,
                                                                  run.learning_rate, warmup_steps)
    pieces = added_token_pieces(source, tokenizer) if source is not None else {}
    spec = architecture_of(config)
    names = objectives if objectives is not None else (config.pretraining and config.pretraining.objectives)
    objectives, dataset_fn = EXAMPLE_PIPELINES[spec.examples.source](
        config, tokenizer, data,
        ExampleSettings(sequence_length, max_predictions, seed, shuffle_buffer, line_by_line, data_service,
                        service_job(data_service, data_service_job, model_dir)), names)
    config = with_recorded_objectives(config, objectives)

    def optimizer_fn(total_steps: int) -> keras.optimizers.Optimizer:
        return create_optimizer(recipe_name, total_steps, learning_rate=learning_rate, warmup_steps=warmup_steps)

    def model_fn() -> keras.Model:
        model = spec.build_pretraining_model(config, objectives, seed=seed)
        if source is not None and newest_checkpoint(model_dir) is None:
            initialize_from(model, source, pieces)
        return model

    kept = kept_precision(run.precision, model_dir)
    save_run_assets(config, tokenizer, model_dir, sequence_length, max_predictions, precision=kept,
                    init_from=source.artifact if source is not None and source.artifact is not None else init_from)
    try:
        with named_service_errors(data_service):
            model = train(model_fn, dataset_fn, model_dir=model_dir, settings=run, optimizer_fn=optimizer_fn,
                          callbacks=callbacks, hidden_size=config.encoder.hidden_size, family=spec,
                          precision_choice=kept)
    except NoTrainingData:
        raise NoTrainingData(no_data_message(describe_data(data))) from None
    record_run_step(model_dir)
    return model


def service_job(address: str | None, job_name: str | None, model_dir: str) -> str | None:
    """The tf.data service job a run's pipelines join (None without a service), once the service answers
    (`tfbert.data.service.wait_for_service`): `job_name`, else the run's own (`run_job_name`)."""
    if address is None:
        if job_name is not None:
            raise ValueError(f"data_service_job {job_name!r} (--data-service-job) names a job of a tf.data service: "
                             "give the service's address too (data_service, --data-service grpc://HOST:PORT)")
        return None
    job_name = check_job_name(job_name) if job_name is not None else None
    wait_for_service(address)
    return job_name or run_job_name(model_dir)


def describe_data(data: str | Sequence[str] | tf.data.Dataset) -> str:
    """`data` as a message names it: its paths, else `the documents given`."""
    if isinstance(data, (str, os.PathLike)):
        return str(data)
    if isinstance(data, (list, tuple)) and all(isinstance(item, (str, os.PathLike)) for item in data):
        return ", ".join(str(item) for item in data)
    return "the documents given"


def _run_source(model_dir: str, init_from: "str | Path | Artifact | None") -> dict:
    """The manifest's source fields: `init_from`'s, else those of the run being resumed in `model_dir`."""
    from tfbert import artifacts

    if init_from is not None:
        return artifacts.source_fields(init_from if isinstance(init_from, artifacts.Artifact)
                                       else artifacts.open(init_from))
    previous = artifacts.read_manifest(model_dir) if "://" not in model_dir else None
    kept = (previous or {}).get("provenance") or {}
    return {name: kept.get(name) for name in ("source", "source_kind", "source_step")}


def record_run_step(model_dir: str) -> None:
    """The run's newest checkpoint step into its manifest's `provenance.step` (local runs; readers of a
    remote or stopped run read it from the checkpoint, `tfbert.artifacts.Artifact.step`)."""
    from tfbert.artifacts.loading import newest_checkpoint_step
    from tfbert.artifacts.manifest import record_step

    step = newest_checkpoint_step(model_dir)
    if step is not None:
        record_step(model_dir, step)


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


# Stands in for the tokenizer's size where a config is checked before the tokenizer is read.
PROVISIONAL_VOCAB_SIZE = 1 << 20


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
    from tfbert.convert.huggingface import config_from_huggingface

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


def with_recorded_objectives(config: ModelConfig, objectives: Sequence[str]) -> ModelConfig:
    """`config` whose `pretraining.objectives` names what the run trains (the run's `config.yaml` says so)."""
    defaults = config.pretraining or PretrainingDefaults()
    return config.replace(pretraining=dataclasses.replace(defaults, objectives=",".join(objectives)))


@dataclasses.dataclass(frozen=True)
class ExampleSettings:
    """How `pretrain` makes examples: sequence length, masked slots, seed, shuffle buffer, a line an example or
    not, and where the pipeline runs (None: here; else a tf.data service dispatcher's address, and the job there)."""

    sequence_length: int = 128
    max_predictions: int = 20
    seed: int | None = None
    shuffle_buffer: int = 1000
    line_by_line: bool = False
    data_service: str | None = None
    data_service_job: str | None = None


DatasetFn = Callable[[int, tf.distribute.InputContext], tf.data.Dataset]


def document_pipeline(config: ModelConfig, tokenizer: Tokenizer, data, settings: ExampleSettings,
                      names: str | Sequence[str] | None = None) -> tuple[tuple[str, ...], DatasetFn]:
    """`pretraining_examples` from documents (`documents_from(data)`), sharded and shuffled per replica.

    Returns the objectives to train (those `names` picks, else the architecture's defaults) and the
    driver's dataset function.
    """
    spec = architecture_of(config)
    objectives = spec.objectives_named(names) if names else spec.default_objectives
    if settings.data_service is not None:
        from tfbert.data.service import check_address
        check_address(settings.data_service)
    if settings.line_by_line:
        check_line_by_line_objectives(spec, objectives)
    source = lines_from(data) if settings.line_by_line else documents_from(data)

    def dataset_fn(batch_size: int, input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        local = settings.data_service is None
        shard = shard_for_input_pipeline(source, input_context) if local else source
        documents = shuffled(shard, settings.shuffle_buffer, settings.seed)
        examples = pretraining_examples(config, tokenizer, documents, batch_size=batch_size,
                                        sequence_length=settings.sequence_length,
                                        max_predictions=settings.max_predictions, seed=settings.seed,
                                        shuffle_buffer=settings.shuffle_buffer, objectives=objectives,
                                        line_by_line=settings.line_by_line, repeat=True)
        return examples if local else on_data_service(examples, settings.data_service, settings.data_service_job)
    return objectives, dataset_fn


def on_data_service(examples: tf.data.Dataset, address: str, job_name: str | None = None) -> tf.data.Dataset:
    """`examples` made by the tf.data service at `address`, every trainer pipeline of the run sharing the job
    `job_name` (`tfbert.data.service.distributed`: dynamic sharding, so no pipeline shards its own input)."""
    from tfbert.data.service import distributed

    return distributed(examples, address, job_name).prefetch(tf.data.AUTOTUNE)


def check_line_by_line_objectives(spec: ArchitectureSpec, objectives: Sequence[str]) -> None:
    """`ValueError` when `objectives` need sentence pairs, which line-by-line examples (one segment) lack."""
    label = spec.examples.model_label
    paired = label is not None and label.removesuffix("_labels") in objectives
    if paired:
        single = [choice for choice in spec.choosable_objectives() if label.removesuffix("_labels") not in choice]
        hint = f"; add --objectives {single[0]}" if single else ""
        raise ValueError(f"--line-by-line makes one-segment examples, so {spec.name}'s "
                         f"{label.removesuffix('_labels')} objective cannot be trained{hint}")


def multilingual_pipeline(config: ModelConfig, tokenizer: Tokenizer, data, settings: ExampleSettings,
                          names: str | Sequence[str] | None = None) -> tuple[tuple[str, ...], DatasetFn]:
    """`xlm_examples` from `tlm:`, `mlm:` or `clm:` data; a `clm:` run trains the causal objective.

    `names` (`tlm`, `mlm` or `clm`), when given, must be what the data's prefix says.
    """
    kind = parse_xlm_data(data)[0]
    if settings.line_by_line or settings.data_service:
        raise ValueError("XLM's tlm:/mlm:/clm: data is read on the trainer as streams of its own; "
                         "--line-by-line and --data-service are for document corpora")
    if names:
        architecture_of(config).objectives_named(names)
        wanted = names if isinstance(names, str) else ",".join(names)
        if wanted.strip() != kind:
            raise ValueError(f"objectives {wanted} need data {wanted.strip()}:... (XLM's objective follows the data's "
                             f"prefix); got {kind}: data")
    objectives = ("clm",) if kind == "clm" else ("mlm",)

    def dataset_fn(batch_size: int, input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        return xlm_examples(config, tokenizer, data, batch_size=batch_size, sequence_length=settings.sequence_length,
                            max_predictions=settings.max_predictions, seed=settings.seed, input_context=input_context)
    return objectives, dataset_fn


# How `pretrain` reads each `ExampleRecipe.source` (tfbert.architectures.spec.EXAMPLE_SOURCES).
EXAMPLE_PIPELINES = {"documents": document_pipeline, "multilingual": multilingual_pipeline}


def save_run_assets(config: ModelConfig, tokenizer: Tokenizer, model_dir: str, sequence_length: int = 128,
                    max_predictions: int = 20, *, init_from: "str | Path | Artifact | None" = None,
                    precision: PrecisionChoice | None = None) -> None:
    """Writes `config.yaml`, `preprocessor.json`, `tokenizer/` and the manifest `tfbert.json` into `model_dir`
    (local or a bucket such as gs://); the manifest's provenance names `init_from` (path, kind, step), or
    keeps the source a resumed run's manifest names, and records `precision` (`tfbert.training.run_precision`).

    A `model_dir` holding another config or tokenizer is refused before anything is written, and each
    file is written under a temporary name and renamed (`tfbert.training.run_assets`).
    """
    from tfbert.artifacts.layout import RUN_CONFIG_FILE
    from tfbert.artifacts.manifest import preprocessor_fields, write_manifest
    from tfbert.training.run_assets import install_run_assets

    with tempfile.TemporaryDirectory() as local:
        save_config(config, Path(local) / RUN_CONFIG_FILE)
        preprocessor = pretraining_preprocessor(config, tokenizer, sequence_length, max_predictions)
        preprocessor.save(local)
        objectives = config.pretraining.objectives if config.pretraining else None
        write_manifest(local, "pretraining-run", family=config.architecture, config=config.encoder.to_dict(),
                       preprocessor=preprocessor_fields(preprocessor),
                       task={"task": "pretraining", "heads": objectives.split(",") if objectives else None},
                       command="pretrain", precision=precision_record(precision) if precision else None,
                       **_run_source(model_dir, init_from))
        install_run_assets(local, model_dir)
