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


@pytest.mark.parametrize("task, signature", [("classification", "serving_default"), ("fill_mask", "serving_default"),
                                             ("tagging", "serving_default"), ("embedding", "preprocess"),
                                             ("embedding", "tokenize")])
def test_a_single_string_instead_of_a_batch_is_refused_naming_the_shape(loaded, task, signature):
    inputs = {name: tf.constant("one text") for name in _inputs(task, ["x"])}
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"not compatible with expected shape \[\?\]"):
        loaded[task].signatures[signature](**inputs)


def test_a_megabyte_text_is_cut_before_tokenizing_to_what_can_reach_the_model(loaded):
    from tfbert.data.preprocessor import CHARACTERS_PER_POSITION

    words = "ünïcode words and more words, 東京 " * 40_000
    reachable = words[:CHARACTERS_PER_POSITION * SEQUENCE_LENGTH]
    for task in ("classification", "tagging", "embedding", "fill_mask"):
        signature = loaded[task].signatures["serving_default"]
        whole, cut = (signature(**_inputs(task, [text.encode()])) for text in (words, reachable))
        for name, value in whole.items():
            np.testing.assert_array_equal(value.numpy(), cut[name].numpy(), err_msg=f"{task} {name}")


def test_more_masks_than_prediction_slots_is_an_error_not_a_silent_drop(loaded):
    fill = loaded["fill_mask"].signatures["serving_default"]
    outputs = fill(text=tf.constant(["[MASK] " * 4 + "end"]))
    assert (outputs["mask_positions"].numpy() > 0).all()
    with pytest.raises(tf.errors.InvalidArgumentError, match="more mask tokens than the 4 this export predicts"):
        fill(text=tf.constant(["[MASK] " * 5 + "end"]))
