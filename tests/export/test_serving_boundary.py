"""What a server can be sent: empty strings, invalid UTF-8, very long text, batches of 1 to 512."""

import numpy as np
import pytest
import tensorflow as tf
from conftest import SEQUENCE_LENGTH

AWKWARD = [b"", b"\xff\xfe\x80 broken", "long words and more words ".encode() * 2000, b"[MASK]", b"   ", b"\x00"]


def _inputs(task: str, texts) -> dict[str, tf.Tensor]:
    text = tf.constant(texts, tf.string)
    if task == "classification":
        return {"text": text, "text_pair": tf.reverse(text, [0])}
    if task == "question_answering":
        return {"question": text, "context": tf.reverse(text, [0])}
    return {"text": text}


def _check_well_formed(task, outputs, batch):
    for name, value in outputs.items():
        assert value.shape[0] == batch, (task, name)
        if value.dtype.is_floating:
            assert np.isfinite(value.numpy()).all(), (task, name)
    if task == "question_answering":
        for row in range(batch):
            assert 0 <= outputs["start"][row] <= outputs["end"][row]


@pytest.mark.parametrize("task", ["classification", "regression", "tagging", "question_answering", "embedding",
                                  "fill_mask"])
def test_awkward_strings(loaded, task):
    outputs = loaded[task].signatures["serving_default"](**_inputs(task, AWKWARD))
    _check_well_formed(task, outputs, len(AWKWARD))
    packed = loaded[task].signatures["preprocess"](text=tf.constant(AWKWARD), **(
        {"text_pair": tf.constant(AWKWARD)} if task == "classification" else {}))
    assert packed["input_word_ids"].shape == (len(AWKWARD), SEQUENCE_LENGTH)
    assert packed["input_mask"].numpy().sum(1).max() == SEQUENCE_LENGTH     # the long text fills the sequence
    tokenized = loaded[task].signatures["tokenize"](text=tf.constant(AWKWARD))
    assert tokenized["lengths"].numpy()[0] == 0 and tokenized["lengths"].numpy()[2] > SEQUENCE_LENGTH


@pytest.mark.parametrize("batch", [1, 512])
def test_batch_sizes(loaded, batch):
    texts = [f"text number {i} with some words" for i in range(batch)]
    for task in ("classification", "question_answering", "fill_mask", "tagging"):
        outputs = loaded[task].signatures["serving_default"](**_inputs(task, texts))
        _check_well_formed(task, outputs, batch)
