"""The encoder, and a sentence embedder on it, convert to TensorFlow Lite with open batch and length (builtin ops
only; absolute and DeBERTa's relative positions), and the converted model gives the Keras model's outputs at any
shape: the path `docs/serving-latency.md` measures (XNNPACK) and `tfbert export --format tflite` writes."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tfbert.config import load_config
from tfbert.models.encoder import build_encoder
from tfbert.models.tasks import SentenceEmbedder

NAMES = ("token_ids", "segment_ids", "padding_mask")


def _converted(model: keras.Model, output: str) -> tf.lite.Interpreter:
    function = tf.function(lambda token_ids, segment_ids, padding_mask: model(
        {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}, training=False)[output],
        autograph=False)
    concrete = function.get_concrete_function(*[tf.TensorSpec([None, None], tf.int32, name=name) for name in NAMES])
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], function)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    return tf.lite.Interpreter(model_content=converter.convert())


def _run(interpreter: tf.lite.Interpreter, inputs: dict) -> np.ndarray:
    indexes = {name: next(detail["index"] for detail in interpreter.get_input_details() if name in detail["name"])
               for name in inputs}
    for name, value in inputs.items():
        interpreter.resize_tensor_input(indexes[name], value.shape)
    interpreter.allocate_tensors()
    for name, value in inputs.items():
        interpreter.set_tensor(indexes[name], value)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])


@pytest.mark.parametrize(("config", "output"), [("bert_tiny", "sequence_output"), ("bert_tiny", "embedding"),
                                                ("deberta_v3_xsmall", "embedding")])   # relative positions
def test_model_converts_to_tflite_with_dynamic_shapes_and_matches_keras(config, output):
    keras.utils.set_random_seed(0)
    encoder = build_encoder(load_config(config).encoder.replace(num_layers=1, vocab_size=1000))
    model = encoder if output == "sequence_output" else SentenceEmbedder(encoder, pooling="mean", normalize=True)
    interpreter = _converted(model, output)
    rng = np.random.default_rng(0)
    for batch, length in ((1, 7), (3, 12)):
        ids = rng.integers(1, 1000, (batch, length)).astype(np.int32)
        mask = (np.arange(length)[None, :] < rng.integers(2, length + 1, (batch, 1))).astype(np.int32)
        inputs = {"token_ids": ids * mask, "segment_ids": np.zeros_like(ids), "padding_mask": mask}
        np.testing.assert_allclose(_run(interpreter, inputs), model(inputs, training=False)[output], atol=2e-5)
