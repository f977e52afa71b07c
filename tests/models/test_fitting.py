"""tfbert's models build their optimizer before `fit` traces the train step (`tfbert.models.fitting`): the step
is traced once instead of twice, and training is the same, weight for weight, as Keras' own lazy build."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from model_fixtures import pretraining_batch, tiny_config

from tfbert.models.pretraining import PretrainingModel
from tfbert.tasks import SequenceClassifier


def _pretraining_model():
    config = tiny_config("bert")
    return PretrainingModel(config), pretraining_batch(config)


def _classifier():
    config = tiny_config("bert")
    rng = np.random.default_rng(0)
    inputs = {"token_ids": rng.integers(1, 120, (4, 16)).astype("int32"), "padding_mask": np.ones((4, 16), "int32"),
              "segment_ids": np.zeros((4, 16), "int32")}
    return SequenceClassifier(config.encoder, num_classes=2), (inputs, np.array([0, 1, 0, 1]))


def _counting_traces(model):
    """`model` whose `train_step` counts how often TensorFlow traces it (its Python body runs once a trace)."""
    traces = []
    train_step = model.train_step

    def counted(data):
        traces.append(1)
        return train_step(data)

    model.train_step = counted
    return traces


def _fitted(make, fit):
    keras.utils.set_random_seed(0)
    model, (inputs, labels) = make()
    model.compile(optimizer=keras.optimizers.AdamW(1e-3, gradient_accumulation_steps=2), jit_compile=False)
    traces = _counting_traces(model)
    fit(model, tf.data.Dataset.from_tensors((inputs, labels)).repeat(4), verbose=0)
    return model, len(traces)


@pytest.mark.parametrize("make", [_pretraining_model, _classifier], ids=["pretraining", "classifier"])
def test_first_fit_traces_the_train_step_once_and_trains_as_keras_does(make):
    model, traces = _fitted(make, lambda model, *args, **kwargs: model.fit(*args, **kwargs))
    keras_model, keras_traces = _fitted(make, keras.Model.fit)
    assert (traces, keras_traces) == (1, 2), "Keras alone traces twice: it makes the optimizer's variables while tracing"
    assert int(model.optimizer.iterations.numpy()) == 2, "four batches, two accumulated in each update"
    for ours, theirs in zip(model.weights + model.optimizer.variables, keras_model.weights + keras_model.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs), err_msg=ours.path)


def test_a_model_compiled_again_builds_its_new_optimizer_for_what_is_trainable_now():
    model, (inputs, labels) = _classifier()
    model.compile(optimizer="adam", jit_compile=False)
    model.fit(inputs, labels, verbose=0)
    model.encoder.trainable = False
    model.compile(optimizer="adam", jit_compile=False)
    frozen = [np.asarray(weight) for weight in model.encoder.weights]
    model.fit(inputs, labels, verbose=0)
    assert len(model.optimizer.variables) == 2 + 2 * len(model.trainable_variables)
    for before, after in zip(frozen, model.encoder.weights):
        np.testing.assert_array_equal(before, np.asarray(after))
