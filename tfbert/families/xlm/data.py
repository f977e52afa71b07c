"""XLM's pretraining data: `tlm:SRC,TGT` aligned files, or `mlm:A,B,...` / `clm:A,B,...` one corpus per language.

XLM's spec names `multilingual_pipeline` as its `ExampleRecipe.pipeline`, so `tfbert pretrain` reads a run's
data here (`tfbert.training.pretraining_inputs.example_pipeline`); the streams, translation pairs and language
sampling are `tfbert.families.xlm.streams`'s. Language ids follow the order the files are given in.

Example:
    >>> parse_xlm_data("tlm:kjv.en,rv.es")       # aligned English and Spanish verses, languages 0 and 1
    ('tlm', ['kjv.en', 'rv.es'])
"""

from __future__ import annotations

from typing import Sequence

import tensorflow as tf

from tfbert.config import ModelConfig
from tfbert.data.masking import mask_dataset
from tfbert.data.parallel import count_lines, parallel_text_lines, parallel_tsv
from tfbert.distribute import shard_for_input_pipeline
from tfbert.families.xlm import streams
from tfbert.text.base import Tokenizer
from tfbert.training.pretraining_inputs import DatasetFn, ExampleSettings, documents_from, pretraining_preprocessor

# The prefixes of XLM data, each the objective it trains (TLM: the MLM objective on translation pairs).
DATA_KINDS = ("tlm", "mlm", "clm")


def parse_xlm_data(data: str | Sequence[str]) -> tuple[str, list[str]]:
    """`"tlm:en.txt,es.txt"` -> `("tlm", ["en.txt", "es.txt"])`; also `mlm:`, `clm:` and `tlm:pairs.tsv`."""
    spec = data if isinstance(data, str) else ",".join(data)
    objective, _, files = spec.partition(":")
    if objective not in DATA_KINDS or not files:
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
    objective, paths = parse_xlm_data(data)
    num_languages = 2 if objective == "tlm" else len(paths)
    if num_languages > max(config.encoder.num_languages, 1):
        raise ValueError(f"{num_languages} languages but the config has num_languages={config.encoder.num_languages}")
    masker = pretraining_preprocessor(config, tokenizer, sequence_length, max_predictions).masker
    if objective == "tlm":
        pairs = parallel_tsv(paths[0]) if len(paths) == 1 else parallel_text_lines(*paths)
        if input_context is not None:
            pairs = pairs.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        batches = streams.tlm_dataset(pairs.repeat(), tokenizer, masker=masker, sequence_length=sequence_length,
                                      batch_size=batch_size, seed=seed, shuffle_buffer=10_000)
    else:
        languages = []
        for language_id, path in enumerate(paths):
            documents = documents_from(path)
            if input_context is not None:
                documents = shard_for_input_pipeline(documents, input_context)
            languages.append(streams.stream_examples(documents.repeat(), tokenizer, language_id=language_id,
                                                     sequence_length=sequence_length))
        sizes = [count_lines(path) if not path.endswith(".gz") else 1 for path in paths]
        mixed = streams.sample_languages(languages, sizes, alpha=alpha, seed=seed)
        batches = mixed.shuffle(1000, seed=seed).batch(batch_size, drop_remainder=True)
        if objective == "mlm":
            batches = mask_dataset(batches, masker, seed=seed)
    model_objective = "clm" if objective == "clm" else "mlm"
    return batches.map(lambda batch: streams.split_xlm_batch(batch, model_objective)).prefetch(tf.data.AUTOTUNE)


def multilingual_pipeline(config: ModelConfig, tokenizer: Tokenizer, data, settings: ExampleSettings,
                          names: str | Sequence[str] | None = None) -> tuple[tuple[str, ...], DatasetFn]:
    """`xlm_examples` from `tlm:`, `mlm:` or `clm:` data; a `clm:` run trains the causal objective.

    XLM's `ExampleRecipe.pipeline` (`tfbert.training.pretraining_inputs.DatasetPipeline`). `names` (`tlm`,
    `mlm` or `clm`), when given, must be what the data's prefix says.
    """
    kind = parse_xlm_data(data)[0]
    if settings.line_by_line or settings.data_service:
        raise ValueError("XLM's tlm:/mlm:/clm: data is read on the trainer as streams of its own; "
                         "--line-by-line and --data-service are for document corpora")
    if names:
        config.spec.objectives_named(names)
        wanted = names if isinstance(names, str) else ",".join(names)
        if wanted.strip() != kind:
            raise ValueError(f"objectives {wanted} need data {wanted.strip()}:... (XLM's objective follows the data's "
                             f"prefix); got {kind}: data")
    objectives = ("clm",) if kind == "clm" else ("mlm",)

    def dataset_fn(batch_size: int, input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        return xlm_examples(config, tokenizer, data, batch_size=batch_size, sequence_length=settings.sequence_length,
                            max_predictions=settings.max_predictions, seed=settings.seed, input_context=input_context)
    return objectives, dataset_fn
