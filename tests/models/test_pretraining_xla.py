"""TPU readiness: one train step of each pretraining model compiles with XLA at static shapes."""

import numpy as np
import pytest
import tensorflow as tf

from tfbert.models.pretraining import PretrainingModel

from model_fixtures import pretraining_batch, tiny_config


@pytest.mark.parametrize("architecture", ["bert", "albert", "roberta"])
def test_one_train_step_compiles_with_xla(architecture):
    config = tiny_config(architecture)
    model = PretrainingModel(config)
    model.compile(optimizer="adam", jit_compile=True)
    inputs, labels = pretraining_batch(config, batch=4, length=16)
    dataset = tf.data.Dataset.from_tensor_slices((inputs, labels)).batch(2, drop_remainder=True)
    assert all(spec.shape[0] == 2 for spec in tf.nest.flatten(dataset.element_spec))
    history = model.fit(dataset, epochs=1, verbose=0)
    assert model.jit_compile is True
    assert np.isfinite(history.history["loss"]).all()
    # The whole train step (forward, float32 losses, gradients, optimizer update) lowers to one HLO module.
    step = tf.function(model.train_step, jit_compile=True)
    batch = next(iter(dataset))
    hlo = step.experimental_get_compiler_ir(batch)(stage="hlo")
    assert hlo.startswith("HloModule")
