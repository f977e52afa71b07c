"""get_config/from_config, the encoder's `.keras` round trip, and the mixed_bfloat16 policy (every family's pretraining
model round-trips in tests/conformance)."""

import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

from tfbert.models.encoder import Encoder, build_encoder
from tfbert.models.pretraining import PretrainingModel

from model_fixtures import pretraining_batch, tiny_config


def encoder_inputs(inputs):
    return {name: inputs[name] for name in ("token_ids", "segment_ids", "padding_mask")}


def test_encoder_config_round_trip_and_keras_file(tmp_path):
    config = tiny_config("albert", num_layers=4, num_hidden_groups=2, inner_group_num=2)
    encoder = build_encoder(config.encoder)
    clone = Encoder.from_config(encoder.get_config())
    assert clone.config == encoder.config
    assert clone.count_params() == encoder.count_params()
    inputs = encoder_inputs(pretraining_batch(config)[0])
    encoder.save(tmp_path / "encoder.keras")
    restored = keras.models.load_model(tmp_path / "encoder.keras")
    np.testing.assert_array_equal(encoder(inputs)["sequence_output"], restored(inputs)["sequence_output"])
    np.testing.assert_array_equal(encoder(inputs)["pooled_output"], restored(inputs)["pooled_output"])


def test_mixed_bfloat16_keeps_logits_and_losses_in_float32(tmp_path):
    config = tiny_config("bert")
    full = PretrainingModel(config)
    mixed = PretrainingModel(config, dtype="mixed_bfloat16")
    mixed.set_weights(full.get_weights())
    inputs, labels = pretraining_batch(config)

    assert mixed.encoder.get_layer("layer0_attention").compute_dtype == "bfloat16"
    assert all(variable.dtype == "float32" for variable in mixed.weights)
    outputs = mixed(inputs, training=False)
    assert {name: keras.backend.standardize_dtype(value.dtype) for name, value in outputs.items()} == {
        "mlm_logits": "float32", "nsp_logits": "float32"}
    reference = full(inputs, training=False)
    np.testing.assert_allclose(outputs["mlm_logits"], reference["mlm_logits"], atol=0.1)
    loss = mixed.compute_loss(y=labels, y_pred=outputs)
    assert keras.backend.standardize_dtype(loss.dtype) == "float32"
    np.testing.assert_allclose(loss, full.compute_loss(y=labels, y_pred=reference), rtol=0.02)

    mixed.compile(optimizer="adam", jit_compile=True)
    history = mixed.fit(tf.data.Dataset.from_tensors((inputs, labels)).repeat(2), verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    mixed.save(tmp_path / "mixed.keras")
    restored = keras.models.load_model(tmp_path / "mixed.keras")
    assert restored.encoder.get_layer("layer0_attention").compute_dtype == "bfloat16"


def test_every_registered_tfbert_class_is_in_the_lazy_registration_table():
    """`import tfbert` registers each class by `tfbert.keras_classes.classes()` (`CLASSES` and the families' specs)
    before its module is imported."""
    from tfbert import keras_classes

    keras_classes.import_all()
    registered = {name.split(">", 1)[1]: type(cls).__name__ == "_StandIn" or cls.__module__
                  for name, cls in keras.saving.get_custom_objects().items() if name.startswith("tfbert>")}
    table = {name: module for module, names in keras_classes.classes().items() for name in names}
    assert registered == table


def test_import_tfbert_registers_its_classes_when_tensorflow_is_imported_before_keras():
    """TensorFlow's `__init__` asks `importlib.util.find_spec("keras")` without importing it; the registration must
    wait for the real import (it once fired on that query, and `load_model` then could not find tfbert's classes)."""
    code = ("import tfbert, tensorflow, keras; "
            "print(type(keras.saving.get_custom_objects()['tfbert>SequenceClassifier']).__name__)")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.split() == ["_StandIn"]


def test_a_saved_encoder_records_its_family(tmp_path):
    encoder = build_encoder(tiny_config("albert").encoder, architecture="albert")
    encoder.save(tmp_path / "encoder.keras")
    assert keras.models.load_model(tmp_path / "encoder.keras").architecture == "albert"
