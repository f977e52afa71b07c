"""Small batches served XLA-compiled at bucketed shapes (`xla_max_batch`) give the outputs of full-length padding."""

import numpy as np
import pytest
import tensorflow as tf
from conftest import LABELS, PAIRS, SEQUENCE_LENGTH, TEXTS

from tfbert.export.compiled import SmallBatchCompilation

LONG = "a long text of many words that takes more than sixteen word pieces to tokenize, so bucket 32"
MAX_BATCH = 2


def test_buckets_step_by_16_then_double_up_to_the_sequence_length():
    compilation = SmallBatchCompilation(max_batch=6)
    assert compilation.lengths(128) == (16, 32, 48, 64, 80, 96, 112, 128)
    assert compilation.lengths(100) == (16, 32, 48, 64, 80, 96, 100)
    assert compilation.lengths(512) == (16, 32, 48, 64, 80, 96, 112, 128, 256, 512)
    assert compilation.lengths(8) == (8,)
    assert compilation.row_buckets() == (1, 2, 4, 6)
    assert SmallBatchCompilation(buckets=(48, 8, 200)).lengths(128) == (8, 48, 128)


@pytest.mark.parametrize("bad", [{"max_batch": 0}, {"buckets": ()}, {"buckets": (0, 16)}])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError, match="max_batch|buckets"):
        SmallBatchCompilation(**bad)


@pytest.fixture(scope="module")
def compiled_exports(models, tokenizer, tmp_path_factory):
    from tfbert.export import export_saved_model

    root = tmp_path_factory.mktemp("compiled")
    options = {"classification": {"label_names": LABELS, "pair": True}, "embedding": {}}
    return {task: tf.saved_model.load(str(export_saved_model(
        models[task], task, tokenizer=tokenizer, output_dir=root, sequence_length=SEQUENCE_LENGTH,
        xla_max_batch=MAX_BATCH, **options[task])))
        for task in options}


def full_length_outputs(model, tokenizer, texts, pairs=None):
    """The in-memory model on inputs padded to the whole sequence length (no trimming, no XLA)."""
    from tfbert.data.preprocessor import Preprocessor

    inputs = Preprocessor(tokenizer, SEQUENCE_LENGTH).encode(texts, pairs)
    return {name: np.asarray(value) for name, value in model(inputs, training=False).items()}


# Batch 1 short (bucket 16) and long (bucket 32), 2 mixed (compiled), 3 rows (over MAX_BATCH: the plain graph).
BATCHES = [["hello"], [LONG], [LONG, "hello"], TEXTS[:3] + [LONG]]


@pytest.mark.parametrize("texts", BATCHES, ids=["one-short", "one-long", "two-mixed", "four-plain"])
def test_embedding_matches_full_length_padding(compiled_exports, models, tokenizer, texts):
    served = compiled_exports["embedding"].signatures["serving_default"](text=tf.constant(texts))["embedding"]
    expected = full_length_outputs(models["embedding"], tokenizer, texts)["embedding"]
    assert served.shape == expected.shape
    np.testing.assert_allclose(served.numpy(), expected, atol=1e-5)


@pytest.mark.parametrize("texts", BATCHES[::2], ids=["one-short", "two-mixed"])
def test_pair_classification_matches_full_length_padding(compiled_exports, models, tokenizer, texts):
    pairs = PAIRS[:len(texts)]
    served = compiled_exports["classification"].signatures["serving_default"](
        text=tf.constant(texts), text_pair=tf.constant(pairs))
    expected = full_length_outputs(models["classification"], tokenizer, texts, pairs)["logits"]
    np.testing.assert_allclose(served["logits"].numpy(), expected, atol=1e-5)
    assert served["label"].numpy().tolist() == [LABELS[index].encode() for index in expected.argmax(-1)]


def test_tasks_with_per_token_outputs_refuse_it(models, tokenizer, tmp_path):
    from tfbert.export import export_saved_model

    with pytest.raises(ValueError, match="xla_max_batch applies to classification, regression, embedding"):
        export_saved_model(models["tagging"], "tagging", tokenizer=tokenizer, output_dir=tmp_path,
                           sequence_length=SEQUENCE_LENGTH, xla_max_batch=4)
