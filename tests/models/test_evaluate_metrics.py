"""Held-out metrics from `model.evaluate` are the means over every masked token, whatever the dataset."""

import numpy as np
import pytest
import tensorflow as tf
from model_fixtures import pretraining_batch, tiny_config

from tfbert.models.pretraining import PretrainingModel


def test_evaluate_on_a_dataset_of_unknown_size_counts_each_batch_once():
    config = tiny_config("albert")
    model = PretrainingModel(config)
    model.compile(optimizer="adam")
    batches = [pretraining_batch(config, seed=seed) for seed in range(4)]
    batches[0][1]["masked_weights"][:, 1:] = 0.0  # fewer real predictions in the first batch
    signature = tf.nest.map_structure(lambda array: tf.TensorSpec(array.shape, array.dtype), batches[0])
    unknown_size = tf.data.Dataset.from_generator(lambda: iter(batches), output_signature=signature)
    assert tf.data.experimental.cardinality(unknown_size) == tf.data.experimental.UNKNOWN_CARDINALITY

    losses, weights = [], []
    for inputs, labels in batches:
        logits = model(inputs)["mlm_logits"]
        token_losses = tf.keras.losses.sparse_categorical_crossentropy(labels["masked_ids"], logits, from_logits=True)
        losses.append(np.asarray(token_losses) * labels["masked_weights"])
        weights.append(labels["masked_weights"])
    expected = sum(loss.sum() for loss in losses) / sum(weight.sum() for weight in weights)

    scores = model.evaluate(unknown_size, return_dict=True, verbose=0)
    assert scores["mlm_loss"] == pytest.approx(expected, rel=1e-5)
