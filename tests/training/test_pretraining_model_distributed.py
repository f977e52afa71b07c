"""tfbert's own PretrainingModel through the driver: two replicas equal one device, uneven masks included."""

import pytest

from .subprocess_runner import TWO_LOGICAL_CPUS, run_python_json

PRETRAINING_EQUIVALENCE = TWO_LOGICAL_CPUS + """
import json, tempfile
import keras, numpy as np
from tfbert.config import EncoderConfig, ModelConfig
from tfbert.models.pretraining import PretrainingModel
from tfbert.training import train

CONFIG = ModelConfig("bert", EncoderConfig(vocab_size=64, hidden_size=16, num_layers=2, num_heads=2,
                                           intermediate_size=32, max_positions=32, dropout_rate=0.0,
                                           attention_dropout_rate=0.0))
LENGTH, PREDICTIONS, COUNT = 12, 4, 64

def examples():
    rng = np.random.default_rng(0)
    real = rng.integers(1, PREDICTIONS + 1, COUNT)          # 1..4 real predictions: uneven across replicas
    weights = (np.arange(PREDICTIONS)[None, :] < real[:, None]).astype("float32")
    inputs = {"token_ids": rng.integers(1, 64, (COUNT, LENGTH)).astype("int32"),
              "segment_ids": np.zeros((COUNT, LENGTH), "int32"),
              "padding_mask": np.ones((COUNT, LENGTH), "int32"),
              "masked_positions": rng.integers(1, LENGTH, (COUNT, PREDICTIONS)).astype("int32")}
    labels = {"masked_ids": rng.integers(1, 64, (COUNT, PREDICTIONS)).astype("int32"),
              "masked_weights": weights, "nsp_labels": rng.integers(0, 2, COUNT).astype("int32")}
    return inputs, labels

def dataset_fn(batch_size, input_context=None):
    return tf.data.Dataset.from_tensor_slices(examples()).repeat().batch(batch_size, drop_remainder=True)

class StepLogs(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.logs = []
    def on_train_batch_end(self, batch, logs=None):
        self.logs.append({name: float(logs[name]) for name in ("loss", "mlm_loss", "nsp_loss", "mlm_accuracy")})

def run(strategy):
    logs = StepLogs()
    model = train(lambda: PretrainingModel(CONFIG), dataset_fn, model_dir=tempfile.mkdtemp(), steps=3,
                  global_batch_size=8, strategy=strategy, checkpoint_every=3, optimizer_recipe="bert",
                  seed=5, verbose=0, callbacks=[logs])
    return logs.logs, [w.numpy() for w in model.trainable_weights]

single_logs, single_weights = run(tf.distribute.OneDeviceStrategy("/cpu:0"))
mirrored_logs, mirrored_weights = run(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
print(json.dumps({"single": single_logs, "mirrored": mirrored_logs,
                  "weight_gap": max(float(np.max(np.abs(a - b))) for a, b in zip(single_weights, mirrored_weights))}))
"""


def test_pretraining_model_on_two_replicas_matches_one_device_with_uneven_masks():
    result = run_python_json(PRETRAINING_EQUIVALENCE, timeout=300)
    assert len(result["single"]) == len(result["mirrored"]) == 3
    for single, mirrored in zip(result["single"], result["mirrored"]):
        assert mirrored == pytest.approx(single, rel=1e-5)
    assert result["weight_gap"] < 1e-3
