"""The input pipelines of `pretrain`: a corpus in, `(inputs, labels)` batches of the family's examples out.

A family's `ExampleRecipe.pipeline` names the function that reads a run's data (`DatasetPipeline`): for
most families `document_pipeline` (text documents: tokenize, pack, mask, pair with `tfbert.data`, sharded
and shuffled per replica, on this host or on a tf.data service); a family with data of its own names its own
function in its package (XLM's `tfbert.families.xlm.data`), imported when a run needs it (`example_pipeline`).

Example:
    >>> from tfbert.config import load_config
    >>> from tfbert.text import load_tokenizer
    >>> objectives, dataset_fn = document_pipeline(load_config("bert_tiny"), load_tokenizer("vocab/"), "corpus.txt",
    ...                                            ExampleSettings(sequence_length=16, max_predictions=2))
    >>> objectives, callable(dataset_fn)       # dataset_fn(batch_size, input_context): the driver's input
    (('mlm', 'nsp'), True)
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Callable, Sequence

import tensorflow as tf

import tfbert.corpus
from tfbert.architectures import ArchitectureSpec
from tfbert.architectures.spec import DOCUMENT_PIPELINE
from tfbert.config import ModelConfig
from tfbert.data import (line_by_line_dataset, pretraining_dataset, text_line_documents, tfds_documents,
                         tfrecord_documents)
from tfbert.data.input_checks import check_text_files
from tfbert.data.preprocessor import MaskingSettings, Preprocessor
from tfbert.data.pretraining import shuffled
from tfbert.data.readers import text_lines
from tfbert.data.service import check_address, check_job_name, distributed, run_job_name, wait_for_service
from tfbert.distribute import shard_for_input_pipeline
from tfbert.text.base import Tokenizer
from tfbert.training.pretraining_config import architecture_of

MODEL_INPUTS = ("token_ids", "segment_ids", "padding_mask", "masked_positions")

DatasetFn = Callable[[int, tf.distribute.InputContext], tf.data.Dataset]


@dataclasses.dataclass(frozen=True)
class ExampleSettings:
    """How `pretrain` makes examples: sequence length, masked slots, seed, shuffle buffer, a line an example or
    not, and where the pipeline runs (None: here; else a tf.data service dispatcher's address, and the job there).

    Example:
        >>> ExampleSettings(sequence_length=64, seed=0).max_predictions
        20
    """

    sequence_length: int = 128
    max_predictions: int = 20
    seed: int | None = None
    shuffle_buffer: int = 1000
    line_by_line: bool = False
    data_service: str | None = None
    data_service_job: str | None = None


# What an `ExampleRecipe.pipeline` names: `(config, tokenizer, data, settings: ExampleSettings, names=None)` -> the
# objectives the run trains (those `names` picks, else the family's) and the driver's dataset function.
DatasetPipeline = Callable[..., tuple[tuple[str, ...], DatasetFn]]


def example_pipeline(spec: ArchitectureSpec) -> DatasetPipeline:
    """The family's `ExampleRecipe.pipeline` as a function: a `"module:function"` name is imported here."""
    pipeline = spec.examples.pipeline
    if callable(pipeline):
        return pipeline
    module, _, function = pipeline.partition(":")
    return getattr(importlib.import_module(module), function)


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
        return tfbert.corpus.documents(tfbert.corpus.path(data[len("corpus:"):] or "web"))
    files = [data] if isinstance(data, str) else list(data)
    expanded = [match for pattern in files for match in (tf.io.gfile.glob(pattern) or [pattern])]
    missing = [path for path in expanded if not tf.io.gfile.exists(path)]
    if missing:
        raise FileNotFoundError(f"corpus file {missing[0]!r} does not exist")
    if expanded and all(path.endswith(".gz") for path in expanded):
        return tfbert.corpus.documents(expanded)
    if expanded and all(path.endswith((".tfrecord", ".tfrecords")) for path in expanded):
        return tfrecord_documents(expanded)
    check_text_files(expanded)
    return text_line_documents(expanded)


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
        >>> from tfbert.config import load_config
        >>> from tfbert.text import WordPieceTokenizer
        >>> pretraining_preprocessor(load_config("albert_tiny"), WordPieceTokenizer("vocab.txt")).masking.unit
        'ngram'
    """
    spec = architecture_of(config)
    masking = MaskingSettings(max_predictions, unit=spec.examples.masking_unit, word_scheme=spec.tokenizer)
    return Preprocessor.for_architecture(spec.name, tokenizer, sequence_length, masking=masking)


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
        >>> from tfbert.config import load_config
        >>> from tfbert.text import load_tokenizer
        >>> batches = pretraining_examples(load_config("bert_tiny"), load_tokenizer("vocab/"), lines_from("corpus.txt"),
        ...                                batch_size=32, sequence_length=16, max_predictions=2, objectives=("mlm",),
        ...                                line_by_line=True)
        >>> inputs, labels = next(iter(batches))
        >>> tuple(inputs["token_ids"].shape), tuple(labels)
        ((32, 16), ('masked_ids', 'masked_weights'))
    """
    recipe = architecture_of(config).examples
    if recipe.pipeline != DOCUMENT_PIPELINE and not line_by_line:
        raise ValueError(f"{config.architecture} examples are not made from documents: pretrain reads its data with "
                         f"{recipe.pipeline} (see its docstring)")
    preprocessor = pretraining_preprocessor(config, tokenizer, sequence_length, max_predictions)
    batching = dict(packer=preprocessor.packer, masker=preprocessor.masker, batch_size=batch_size, seed=seed,
                    shuffle_buffer=shuffle_buffer)
    if line_by_line:
        examples = line_by_line_dataset(documents.repeat() if repeat else documents, tokenizer.tokenize, **batching)
    else:
        examples = pretraining_dataset(documents, tokenizer.tokenize, objective=recipe.objective, repeat=repeat,
                                       **batching)
    return examples.map(lambda batch: split_inputs_and_labels(batch, config, objectives)).prefetch(tf.data.AUTOTUNE)


def document_pipeline(config: ModelConfig, tokenizer: Tokenizer, data, settings: ExampleSettings,
                      names: str | Sequence[str] | None = None) -> tuple[tuple[str, ...], DatasetFn]:
    """`pretraining_examples` from documents (`documents_from(data)`), sharded and shuffled per replica.

    Returns the objectives to train (those `names` picks, else the architecture's defaults) and the
    driver's dataset function.
    """
    spec = architecture_of(config)
    objectives = spec.objectives_named(names) if names else spec.default_objectives
    if settings.data_service is not None:
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
    return distributed(examples, address, job_name).prefetch(tf.data.AUTOTUNE)


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


def check_line_by_line_objectives(spec: ArchitectureSpec, objectives: Sequence[str]) -> None:
    """`ValueError` when `objectives` need sentence pairs, which line-by-line examples (one segment) lack."""
    label = spec.examples.model_label
    paired = label is not None and label.removesuffix("_labels") in objectives
    if paired:
        single = [choice for choice in spec.choosable_objectives() if label.removesuffix("_labels") not in choice]
        hint = f"; add --objectives {single[0]}" if single else ""
        raise ValueError(f"--line-by-line makes one-segment examples, so {spec.name}'s "
                         f"{label.removesuffix('_labels')} objective cannot be trained{hint}")
