"""Stop a run whose input gave no batch, instead of "training" on nothing and reporting success.

A corpus whose lines tokenize to nothing (control characters, text in a script the vocabulary lacks), or whose
documents are all too short to pair, gives an input pipeline with no example at all; `fit` then runs its
epochs without a single step, logs nothing and returns, and the run writes checkpoints and an encoder as if it
had trained. `StopOnNoData` sees the first epoch end without a batch and raises `NoTrainingData` (a
`ValueError`) before the checkpoint callback after it writes anything. Finding out costs what reading the
corpus once costs, as training would.

Example:
    >>> print(no_data_message("corpus.txt"))
    corpus.txt gave no training example: its lines tokenize to nothing (or its documents are too short ...
"""

from __future__ import annotations

import keras


class NoTrainingData(ValueError):
    """The input pipeline gave no batch: nothing could be trained, no checkpoint was written."""


def no_data_message(source: str) -> str:
    """The one line `NoTrainingData` says, naming `source` (the corpus files, or the flag that gave them)."""
    return (f"{source} gave no training example: its lines tokenize to nothing (or its documents are too short "
            "to make an example); nothing was trained and no checkpoint was written; give text in a script the "
            "tokenizer's vocabulary covers (tfbert vocab stats TOKENIZER --data FILE shows the unknown pieces)")


class StopOnNoData(keras.callbacks.Callback):
    """Raises `NoTrainingData` at the end of an epoch in which no training batch ran.

    Example:
        >>> callback = StopOnNoData()
        >>> callback.on_epoch_begin(0)
        >>> callback.on_epoch_end(0)
        Traceback (most recent call last):
        tfbert.training.no_data.NoTrainingData: the training data gave no training example: ...
    """

    def __init__(self):
        super().__init__()
        self._batches = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._batches = 0

    def on_train_batch_end(self, batch, logs=None):
        self._batches += 1

    def on_epoch_end(self, epoch, logs=None):
        if not self._batches:
            raise NoTrainingData(no_data_message("the training data"))
