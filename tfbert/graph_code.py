"""tfbert's TensorFlow code is graph code already: AutoGraph calls it as it is instead of rewriting it.

A `tf.data` map or a `tf.function` runs AutoGraph on the Python function it is given and, recursively, on
every function that one calls: each is parsed from its source, its AST rewritten (Python `if`/`for`/`while`
on tensors into `tf.cond`/`tf.while_loop`) and compiled again. tfbert's data, text and training code needs
none of that (loops and conditions on tensors are written as TensorFlow ops; Python `if`s test static shapes
and settings), so the rewrite only costs time: 55 functions and about 3.5 CPU-s in every process that builds
a pretraining pipeline, before its first step.

TensorFlow declares Keras' code the same way (`DoNotConvert("keras")` in `tensorflow/python/autograph/core/
config.py`). There is no public API that declares a package (`tf.autograph.experimental.do_not_convert`
marks one function, and the pipelines have dozens), hence TensorFlow's own rule list; if a TensorFlow release
moves it, AutoGraph converts tfbert's functions as before, which is slower but the same.

A function of yours that tfbert calls inside a pipeline (a `tokenizer` callable given to
`tfbert.data.tokenize_documents`, say) is called as it is too, as it would be in tfbert's SavedModels: write
its tensor conditions as TensorFlow ops, or set `TFBERT_AUTOGRAPH=convert` in the environment to have AutoGraph
rewrite tfbert's functions (and so yours) as before.

Example:
    >>> import tensorflow as tf
    >>> from tfbert.data import split_long_sentences
    >>> declare_graph_code()
    >>> dataset = tf.data.Dataset.from_tensors(tf.ragged.constant([[1, 2, 3]]))
    >>> next(iter(dataset.map(lambda rows: split_long_sentences(rows, 2)))).to_list()
    [[1, 2], [3]]
"""

from __future__ import annotations

import os

PACKAGE = "tfbert"
SWITCH = "TFBERT_AUTOGRAPH"


def declare_graph_code() -> None:
    """Adds a rule that AutoGraph leaves tfbert's functions unconverted, once per process, unless
    `TFBERT_AUTOGRAPH=convert`."""
    if os.environ.get(SWITCH, "").lower() == "convert":
        return
    try:
        from tensorflow.python.autograph.core import config
    except ImportError:
        return
    if not any(isinstance(rule, config.DoNotConvert) and rule.matches(PACKAGE) for rule in config.CONVERSION_RULES):
        config.CONVERSION_RULES = (config.DoNotConvert(PACKAGE), *config.CONVERSION_RULES)
