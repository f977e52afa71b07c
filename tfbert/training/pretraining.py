"""`pretrain`: a config, a tokenizer and a corpus in, a trained model and its encoder out.

This is the Python API behind `tfbert pretrain`: it resolves the run's config, tokenizer and optimizer
(`tfbert.training.pretraining_config`), builds the architecture's input pipeline
(`tfbert.training.pretraining_inputs`), writes the run's assets (`tfbert.training.run_assets`) and runs the
resumable `model.fit` driver on the matching pretraining model. What differs by architecture comes from its
`tfbert.architectures` spec: the example recipe and pipeline (`spec.examples`), the packing style, the
optimizer recipe and the model factory.

Built in: `bert` (MLM + NSP), `albert` (MLM + SOP), `roberta` (MLM, full
sentences), `electra` (generator MLM + discriminator RTD; consecutive text as one
segment or two in order), `spanbert` (span masking + SBO, one segment, full
sentences), `xlmr` (RoBERTa's recipe with a SentencePiece vocabulary) and `xlm`
(`data="tlm:SRC,TGT"` aligned files, `"mlm:A,B,..."` or `"clm:A,B,..."` one corpus
per language, language ids in the order given; see `tfbert.families.xlm.data`).

Example:
    >>> from tfbert.training.pretraining import pretrain
    >>> model = pretrain("bert_tiny", tokenizer="vocab/", data=["botchan.txt"], model_dir="runs/bert",
    ...                  steps=2, batch_size=2, sequence_length=16, max_predictions=2, seed=0)
    resumed from runs/bert/ckpt-2 at step 2 of 2
    >>> type(model).__name__           # runs/bert held this run already: the call resumed at its end
    'PretrainingModel'
    >>> Path("runs/bert/encoder/encoder.keras").is_file()    # with checkpoints, config.yaml, tokenizer/
    True
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import keras
import tensorflow as tf

from tfbert.artifacts.checkpoints import newest_checkpoint
from tfbert.config import ModelConfig
from tfbert.data.service import named_service_errors
from tfbert.text.base import Tokenizer
from tfbert.training.driver import train
from tfbert.training.initialization import added_token_pieces, initialize_from
from tfbert.training.no_data import NoTrainingData, no_data_message
from tfbert.training.optimization import create_optimizer
from tfbert.training.pretraining_config import (architecture_of, check_sequence_length, optimizer_settings,
                                                read_source_for, run_config, run_tokenizer, with_recorded_objectives)
from tfbert.training.pretraining_inputs import ExampleSettings, example_pipeline, service_job
from tfbert.training.run_assets import record_run_step, save_run_assets
from tfbert.training.run_precision import kept_precision
from tfbert.training.settings import TrainingSettings, training_settings


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
    documents (`tfbert.training.pretraining_inputs.documents_from`), or the data a family's own
    pipeline reads (`ExampleRecipe.pipeline`: XLM's `tlm:SRC,TGT`, `mlm:A,B,...`, `clm:A,B,...`,
    `tfbert.families.xlm.data`). Files may be in a bucket (`gs://`). Documents, then examples, are shuffled
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
    objectives, dataset_fn = example_pipeline(spec)(
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


def describe_data(data: str | Sequence[str] | tf.data.Dataset) -> str:
    """`data` as a message names it: its paths, else `the documents given`."""
    if isinstance(data, (str, os.PathLike)):
        return str(data)
    if isinstance(data, (list, tuple)) and all(isinstance(item, (str, os.PathLike)) for item in data):
        return ", ".join(str(item) for item in data)
    return "the documents given"
