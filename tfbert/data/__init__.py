"""Pretraining input pipelines as `tf.data` graph ops: readers, example builders, packing, masking."""

from tfbert.commands.tensorflow_logs import import_tensorflow_quietly, runs_as_main

if runs_as_main("tfbert.data.service"):   # a server command: TensorFlow comes in here, as quietly as for `tfbert`
    import_tensorflow_quietly()

from tfbert.data.masking import MaskedLMMasker, mask_dataset
from tfbert.data.packing import SegmentPacker, num_special_tokens
from tfbert.data.pretraining import (
    contiguous_chunks,
    contiguous_examples,
    line_by_line_dataset,
    pair_examples,
    pretraining_dataset,
    sentence_pairs,
    split_long_sentences,
    tokenize_documents,
)
from tfbert.data.readers import split_sentences, text_line_documents, tfds_documents, tfrecord_documents
from tfbert.data.word_boundaries import word_start_flags
from tfbert.graph_code import declare_graph_code

declare_graph_code()   # before any pipeline is traced: see tfbert/graph_code.py

__all__ = [
    "MaskedLMMasker",
    "SegmentPacker",
    "contiguous_chunks",
    "contiguous_examples",
    "line_by_line_dataset",
    "mask_dataset",
    "num_special_tokens",
    "pair_examples",
    "pretraining_dataset",
    "sentence_pairs",
    "split_long_sentences",
    "split_sentences",
    "text_line_documents",
    "tfds_documents",
    "tfrecord_documents",
    "tokenize_documents",
    "word_start_flags",
]
