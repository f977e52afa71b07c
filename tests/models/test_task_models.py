"""Task models: shapes, float32 outputs, config and `.keras` round trips, masking, and bad options."""

import json
import subprocess
import sys
import warnings
import zipfile

import keras
import numpy as np
import pytest

from tfbert.config import EncoderConfig
from tfbert.models.encoder import build_encoder
from tfbert.models.tasks import (
    MultipleChoice,
    EmbeddingDistiller,
    SentenceEmbedder,
    SequenceClassifier,
    SequenceRegressor,
    SiameseEmbedder,
    SpanExtractor,
    TokenClassifier,
)

CONFIG = EncoderConfig(vocab_size=100, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=48,
                       max_positions=32)


def batch(rows=4, length=12, seed=0):
    rng = np.random.default_rng(seed)
    mask = (np.arange(length)[None, :] < rng.integers(4, length + 1, rows)[:, None]).astype("int32")
    return {"token_ids": (rng.integers(1, 100, (rows, length)) * mask).astype("int32"),
            "segment_ids": np.zeros((rows, length), "int32"), "padding_mask": mask}


def cases():
    x = batch()
    choices = {name: np.stack([value, value[::-1], value], 1) for name, value in x.items()}
    pairs = {f"{side}_{name}": value for side in ("first", "second") for name, value in x.items()}
    triplets = {f"{side}_{name}": value for side in ("first", "second", "third") for name, value in x.items()}
    translations = {f"{side}_{name}": value for side in ("source", "target") for name, value in x.items()}
    return [
        (lambda: SequenceClassifier(CONFIG, num_classes=3), x, {"logits": (4, 3)}),
        (lambda: SequenceClassifier(CONFIG, num_classes=2, pooling="mean"), x, {"logits": (4, 2)}),
        (lambda: SequenceRegressor(CONFIG), x, {"score": (4,)}),
        (lambda: TokenClassifier(CONFIG, num_tags=5), x, {"logits": (4, 12, 5)}),
        (lambda: SpanExtractor(CONFIG), x, {"start_logits": (4, 12), "end_logits": (4, 12)}),
        (lambda: MultipleChoice(CONFIG), choices, {"logits": (4, 3)}),
        (lambda: SentenceEmbedder(CONFIG, pooling="cls", normalize=True), x, {"embedding": (4, 32)}),
        (lambda: SiameseEmbedder(CONFIG, loss="contrastive"), pairs,
         {"first_embedding": (4, 32), "second_embedding": (4, 32), "cosine": (4,)}),
        (lambda: SiameseEmbedder(CONFIG, pooling="max", loss="softmax"), pairs,
         {"first_embedding": (4, 32), "second_embedding": (4, 32), "cosine": (4,), "logits": (4, 3)}),
        (lambda: SiameseEmbedder(CONFIG, loss="multiple-negatives", triplets=True), triplets,
         {"first_embedding": (4, 32), "second_embedding": (4, 32), "third_embedding": (4, 32), "cosine": (4,)}),
        (lambda: EmbeddingDistiller(CONFIG), translations, {"source_embedding": (4, 32), "target_embedding": (4, 32)}),
    ]


@pytest.mark.parametrize("index", range(11))
def test_outputs_are_float32_and_keras_round_trip_is_identical(tmp_path, index):
    make, inputs, shapes = cases()[index]
    model = make()
    outputs = model(inputs)
    assert {name: tuple(value.shape) for name, value in outputs.items()} == shapes
    assert all(keras.backend.standardize_dtype(value.dtype) == "float32" for value in outputs.values())
    clone = type(model).from_config(model.get_config())
    assert clone.get_config() == model.get_config() and clone.count_params() == model.count_params()
    model.save(tmp_path / "model.keras")
    restored = keras.models.load_model(tmp_path / "model.keras")
    assert type(restored) is type(model) and restored.encoder.config == CONFIG
    for name, value in restored(inputs).items():
        np.testing.assert_array_equal(np.asarray(value), np.asarray(outputs[name]))



def test_a_keras_file_saved_when_the_task_models_were_tfbert_tasks_models_still_loads(tmp_path):
    """Keras finds a registered class by its registered name (`tfbert>SequenceClassifier`), not by the `module`
    its config names, so a `.keras` file saved before the task models moved from `tfbert.tasks.models` to
    `tfbert.models.tasks` loads after `import tfbert` alone (the stand-ins of `tfbert.keras_classes`)."""
    x = batch()
    model = SequenceClassifier(CONFIG, num_classes=3, pooling="mean")
    expected = np.asarray(model(x)["logits"])
    model.save(tmp_path / "new.keras")
    with zipfile.ZipFile(tmp_path / "new.keras") as new, zipfile.ZipFile(tmp_path / "old.keras", "w") as old:
        for item in new.infolist():
            data = new.read(item)
            if item.filename == "config.json":
                text = data.decode("utf-8")
                assert '"module": "tfbert.models.tasks.classification"' in text
                text = text.replace('"module": "tfbert.models.tasks.', '"module": "tfbert.tasks.models.')
                data = text.encode("utf-8")
                config = json.loads(data)
                assert (config["module"], config["registered_name"]) == ("tfbert.tasks.models.classification",
                                                                         "tfbert>SequenceClassifier")
            old.writestr(item, data)
    np.save(tmp_path / "inputs.npy", x, allow_pickle=True)
    script = f"""
import sys
import numpy as np
import tfbert, keras
model = keras.models.load_model({str(tmp_path / "old.keras")!r})
inputs = np.load({str(tmp_path / "inputs.npy")!r}, allow_pickle=True).item()
np.save({str(tmp_path / "logits.npy")!r}, np.asarray(model(inputs)["logits"]))
print(type(model).__module__, type(model).__name__, "tfbert.tasks.models" in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-3:] == ["tfbert.models.tasks.classification", "SequenceClassifier", "False"]
    np.testing.assert_allclose(np.load(tmp_path / "logits.npy"), expected, rtol=1e-6, atol=1e-6)

def test_pretrained_encoder_is_used_as_is_and_mixed_precision_keeps_float32_outputs():
    encoder = build_encoder(CONFIG)
    model = SequenceClassifier(encoder, num_classes=2)
    assert model.encoder is encoder
    mixed = SpanExtractor(CONFIG, dtype="mixed_bfloat16")
    outputs = mixed(batch())
    assert keras.backend.standardize_dtype(outputs["start_logits"].dtype) == "float32"
    assert mixed.encoder.get_layer("layer0_attention").compute_dtype == "bfloat16"


def test_span_logits_mask_padding_and_multiple_choice_scores_each_choice_alone():
    x = batch()
    outputs = SpanExtractor(CONFIG)(x)
    assert (np.asarray(outputs["start_logits"])[x["padding_mask"] == 0] <= -1e8).all()
    model = MultipleChoice(CONFIG)
    choices = {name: np.stack([value[:1], value[1:2]], 1) for name, value in x.items()}
    swapped = {name: value[:, ::-1] for name, value in choices.items()}
    logits, logits_swapped = np.asarray(model(choices)["logits"]), np.asarray(model(swapped)["logits"])
    np.testing.assert_allclose(logits[:, ::-1], logits_swapped, rtol=1e-5, atol=1e-5)


def test_siamese_embedder_shares_its_encoder_with_the_single_text_embedder():
    siamese = SiameseEmbedder(CONFIG, pooling="mean")
    x = batch()
    pairs = {f"{side}_{name}": value for side in ("first", "second") for name, value in x.items()}
    embedder = siamese.embedder()
    assert embedder.encoder is siamese.encoder
    np.testing.assert_allclose(np.asarray(embedder(x)["embedding"]),
                               np.asarray(siamese(pairs)["first_embedding"]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(siamese(pairs)["cosine"]), 1.0, rtol=1e-5)


@pytest.mark.parametrize("make, message", [
    (lambda: SequenceClassifier(CONFIG, num_classes=1), "use SequenceRegressor"),
    (lambda: SequenceClassifier(CONFIG, pooling="attention"), "unknown pooling 'attention'"),
    (lambda: SiameseEmbedder(CONFIG, loss="triplet"), "unknown embedding loss 'triplet'"),
    (lambda: SiameseEmbedder(CONFIG, loss="cosine", triplets=True), "triplets .* train with loss='multiple-negatives'"),
    (lambda: TokenClassifier(CONFIG, num_tags=1), "num_tags must be at least 2"),
])
def test_bad_options(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_fitting_a_task_that_skips_the_pooler_does_not_warn_about_its_gradients():
    x = batch()
    model = TokenClassifier(CONFIG, num_tags=5)
    model.compile(optimizer="adam")
    with warnings.catch_warnings(record=True) as caught:
        warnings.filterwarnings("always", category=UserWarning)
        labels = {"labels": np.zeros((4, 12), "int32"), "label_weights": x["padding_mask"]}
        model.fit(x, labels, epochs=1, verbose=0)
    assert not [str(w.message) for w in caught if "Gradients do not exist" in str(w.message)]


def test_keras_file_weights_load_as_keras_loads_them_and_leave_nothing_behind(tmp_path):
    from tfbert.finetuning.finetune import load_keras_file_weights

    model = SequenceClassifier(CONFIG, num_classes=2)
    model.compile(optimizer="adam")
    inputs, labels = batch(), np.array([0, 1, 1, 0])
    model.fit(inputs, labels, epochs=1, verbose=0)
    model.save(tmp_path / "best.keras")
    saved = [np.array(weight) for weight in model.weights]
    model.fit(inputs, labels, epochs=1, verbose=0)
    keras_loaded = keras.models.clone_model(model)
    keras_loaded.set_weights(model.get_weights())
    keras_loaded.load_weights(tmp_path / "best.keras")

    load_keras_file_weights(model, tmp_path / "best.keras")
    for variable, expected, keras_variable in zip(model.weights, saved, keras_loaded.weights):
        np.testing.assert_array_equal(np.array(variable), expected, err_msg=variable.path)
        np.testing.assert_array_equal(np.array(variable), np.array(keras_variable), err_msg=variable.path)
    assert [path.name for path in tmp_path.iterdir()] == ["best.keras"]
