"""TPU readiness: the whole train step compiles as one XLA program (every family's pretraining model
trains two steps with XLA in tests/conformance)."""

import tensorflow as tf

from tfbert.models.pretraining import PretrainingModel

from model_fixtures import pretraining_batch, tiny_config


def test_the_whole_train_step_lowers_to_one_hlo_module():
    """Forward, float32 losses, gradients and the optimizer update: one HLO module at static shapes."""
    config = tiny_config("bert")
    model = PretrainingModel(config)
    model.compile(optimizer="adam", jit_compile=True)
    model.optimizer.build(model.trainable_variables)
    inputs, labels = pretraining_batch(config, batch=2, length=16)
    batch = tf.nest.map_structure(tf.constant, (inputs, labels))
    hlo = tf.function(model.train_step, jit_compile=True).experimental_get_compiler_ir(batch)(stage="hlo")
    assert hlo.startswith("HloModule")
