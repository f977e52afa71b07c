"""`pretrain`: a config, a tokenizer and a corpus in, a trained model and its encoder out.

This is the Python API behind `tfbert pretrain`: it builds each architecture's
input pipeline (tokenize, pack, mask, pair) with `tfbert.data`, the matching
`PretrainingModel`, and runs the resumable `model.fit` driver.

Example:
    >>> from tfbert.training.pretraining import pretrain
    >>> pretrain("albert_tiny", tokenizer="vocab/", data=["corpus.txt"], model_dir="runs/albert",
    ...          steps=1000, global_batch_size=64)
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
from pathlib import Path
from typing import Sequence

import keras
import tensorflow as tf

from tfbert.config import ModelConfig, load_config, save_config
from tfbert.data import MaskedLMMasker, SegmentPacker, pretraining_dataset, text_line_documents, tfds_documents
from tfbert.distribute import resolve_strategy, shard_for_input_pipeline
from tfbert.models.pretraining import PretrainingModel
from tfbert.text import load_tokenizer
from tfbert.text.base import Tokenizer
from tfbert.training.driver import train
from tfbert.training.optimization import create_optimizer

logger = logging.getLogger(__name__)

MODEL_INPUTS = ("token_ids", "segment_ids", "padding_mask", "masked_positions")


@dataclasses.dataclass(frozen=True)
class PretrainingRecipe:
    """How an architecture's examples are made: objective, packing, masking unit, label names."""

    objective: str
    packing_style: str
    masking_unit: str
    word_scheme: str
    data_label: str | None = None
    model_label: str | None = None


RECIPES = {
    "bert": PretrainingRecipe("nsp", "bert", "token", "wordpiece", "next_sentence_labels", "nsp_labels"),
    "albert": PretrainingRecipe("sop", "bert", "ngram", "sentencepiece", "sentence_order_labels", "sop_labels"),
    "roberta": PretrainingRecipe("full_sentences", "roberta", "token", "byte_bpe"),
}


def _recipe(config: ModelConfig) -> PretrainingRecipe:
    if config.architecture not in RECIPES:
        raise ValueError(
            f"pretrain covers {', '.join(RECIPES)}; architecture {config.architecture!r} is not supported here"
        )
    return RECIPES[config.architecture]


def split_inputs_and_labels(batch: dict[str, tf.Tensor], config: ModelConfig) -> tuple[dict, dict]:
    """A `tfbert.data` batch as the `(inputs, labels)` pair that `PretrainingModel.fit` takes."""
    recipe = _recipe(config)
    inputs = {name: batch[name] for name in MODEL_INPUTS}
    labels = {"masked_ids": batch["masked_ids"], "masked_weights": batch["masked_weights"]}
    if recipe.data_label:
        labels[recipe.model_label] = batch[recipe.data_label]
    return inputs, labels


def documents_from(data: str | Sequence[str]) -> tf.data.Dataset:
    """Documents from text files (a sentence a line, blank lines between documents) or `tfds:NAME`."""
    if isinstance(data, str) and data.startswith("tfds:"):
        return tfds_documents(data[len("tfds:"):])
    files = [data] if isinstance(data, str) else list(data)
    expanded = [match for pattern in files for match in (tf.io.gfile.glob(pattern) or [pattern])]
    missing = [path for path in expanded if not tf.io.gfile.exists(path)]
    if missing:
        raise FileNotFoundError(f"corpus file {missing[0]!r} does not exist")
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
) -> tf.data.Dataset:
    """`(inputs, labels)` batches for `config`'s architecture, masked anew on every pass."""
    recipe = _recipe(config)
    packer = SegmentPacker(sequence_length, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id,
                           style=recipe.packing_style)
    masker = MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=max_predictions,
                                          unit=recipe.masking_unit, word_scheme=recipe.word_scheme)
    examples = pretraining_dataset(documents, tokenizer.tokenize, objective=recipe.objective, packer=packer,
                                   masker=masker, batch_size=batch_size, seed=seed)
    return examples.map(lambda batch: split_inputs_and_labels(batch, config)).prefetch(tf.data.AUTOTUNE)


def config_for_tokenizer(config: ModelConfig, tokenizer: Tokenizer) -> ModelConfig:
    """`config` with the tokenizer's vocabulary size and padding id."""
    size, pad_id = tokenizer.vocabulary_size(), tokenizer.pad_id
    if (config.encoder.vocab_size, config.encoder.pad_id) != (size, pad_id):
        logger.info("vocab_size %d -> %d and pad_id %d -> %d from the tokenizer",
                    config.encoder.vocab_size, size, config.encoder.pad_id, pad_id)
    encoder = config.encoder.replace(vocab_size=size, pad_id=pad_id)
    if encoder.position_offset:
        encoder = encoder.replace(position_offset=pad_id + 1)
    return config.replace(encoder=encoder)


def pretrain(
    config: str | ModelConfig,
    *,
    tokenizer: str | Path | Tokenizer,
    data: str | Sequence[str],
    model_dir: str,
    steps: int,
    global_batch_size: int,
    strategy: str | tf.distribute.Strategy = "auto",
    sequence_length: int = 128,
    max_predictions: int = 20,
    optimizer_recipe: str | None = None,
    learning_rate: float | None = None,
    warmup_steps: int | None = None,
    checkpoint_every: int = 1000,
    steps_per_execution: int = 1,
    seed: int | None = None,
    verbose: str | int = "auto",
    callbacks: list[keras.callbacks.Callback] | None = None,
) -> PretrainingModel:
    """Pretrains BERT (MLM + NSP), ALBERT (MLM + SOP) or RoBERTa (MLM) and saves the encoder.

    Rerunning the same call resumes from the newest checkpoint in `model_dir`.
    At the end `model_dir` holds `encoder/encoder.keras`, `tokenizer/` and
    `config.yaml`, which fine-tuning and export read.
    """
    config = load_config(config) if isinstance(config, str) else config
    recipe_name = optimizer_recipe or {"albert": "albert", "roberta": "roberta"}.get(config.architecture, "bert")
    if not isinstance(tokenizer, Tokenizer):
        tokenizer = load_tokenizer(tokenizer)
    config = config_for_tokenizer(config, tokenizer)
    strategy = resolve_strategy(strategy) if isinstance(strategy, str) else strategy
    documents = documents_from(data)

    def dataset_fn(batch_size: int, input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        shard = shard_for_input_pipeline(documents, input_context)
        return pretraining_examples(config, tokenizer, shard.repeat(), batch_size=batch_size,
                                    sequence_length=sequence_length, max_predictions=max_predictions, seed=seed)

    def optimizer_fn(total_steps: int) -> keras.optimizers.Optimizer:
        return create_optimizer(recipe_name, total_steps, learning_rate=learning_rate, warmup_steps=warmup_steps)

    save_run_assets(config, tokenizer, model_dir)
    return train(
        lambda: PretrainingModel(config),
        dataset_fn,
        model_dir=model_dir,
        steps=steps,
        global_batch_size=global_batch_size,
        strategy=strategy,
        optimizer_fn=optimizer_fn,
        checkpoint_every=checkpoint_every,
        steps_per_execution=steps_per_execution,
        seed=seed,
        verbose=verbose,
        callbacks=callbacks,
    )


def save_run_assets(config: ModelConfig, tokenizer: Tokenizer, model_dir: str) -> None:
    """Writes `config.yaml` and `tokenizer/` into `model_dir` (local or a bucket such as gs://)."""
    with tempfile.TemporaryDirectory() as local:
        save_config(config, Path(local) / "config.yaml")
        tokenizer.save_assets(Path(local) / "tokenizer")
        for path in sorted(Path(local).rglob("*")):
            if path.is_file():
                target = f"{model_dir.rstrip('/')}/{path.relative_to(local).as_posix()}"
                tf.io.gfile.makedirs(target.rsplit("/", 1)[0])
                tf.io.gfile.copy(str(path), target, overwrite=True)
