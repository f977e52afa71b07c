"""XLM-style encoders with language embeddings: the export takes a `language` input per text."""

import numpy as np
import pytest
import tensorflow as tf
from conftest import SEQUENCE_LENGTH, TEXTS, run_in_fresh_process, strings

from tfbert.tasks import TensorFlowTokenizer, encode_texts

LANGUAGES = ["en", "fr"]


@pytest.fixture(scope="module")
def multilingual(tiny_config, tokenizer, tmp_path_factory):
    """A tiny classifier whose encoder has two language embeddings, and its export."""
    import keras

    from tfbert.export import export_saved_model
    from tfbert.models.encoder import Encoder
    from tfbert.tasks import SequenceClassifier

    keras.utils.set_random_seed(1)
    encoder = Encoder(tiny_config.encoder.replace(num_languages=len(LANGUAGES)), name="encoder")
    model = SequenceClassifier(encoder, num_classes=2)
    path = export_saved_model(model, "xlm", tokenizer=tokenizer, output_dir=tmp_path_factory.mktemp("xlm"),
                              sequence_length=SEQUENCE_LENGTH, languages=LANGUAGES)
    return model, path


def test_language_input_selects_the_language_embedding(multilingual, tokenizer, tmp_path):
    model, path = multilingual
    features = encode_texts(TensorFlowTokenizer(tokenizer, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id),
                            TEXTS, max_length=SEQUENCE_LENGTH)
    language = np.array([0, 1, 1, 0], np.int32)
    per_token = np.repeat(language[:, None], SEQUENCE_LENGTH, axis=1)
    hub_inputs = {"input_word_ids": features["token_ids"], "input_mask": features["padding_mask"],
                  "input_type_ids": features["segment_ids"], "input_language_ids": per_token}
    served = run_in_fresh_process([
        ("serve", path, "serving_default", {"text": strings(TEXTS), "language": strings([LANGUAGES[i] for i in language])}),
        ("flipped", path, "serving_default", {"text": strings(TEXTS), "language": strings([LANGUAGES[1 - i] for i in language])}),
        ("encode", path, "encode", hub_inputs),
    ], tmp_path)
    expected = model({**features, "language_ids": per_token}, training=False)
    np.testing.assert_allclose(served["serve"]["logits"], expected["logits"], atol=1e-5)
    assert np.abs(served["flipped"]["logits"] - served["serve"]["logits"]).max() > 1e-4, "the language matters"
    encoded = model.encoder({**features, "language_ids": per_token}, training=False)
    np.testing.assert_allclose(served["encode"]["pooled_output"], encoded["pooled_output"], atol=1e-5)


def test_unknown_language_is_a_clear_error(multilingual):
    signature = tf.saved_model.load(str(multilingual[1])).signatures["serving_default"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="unknown language; expected one of: en, fr"):
        signature(text=tf.constant(["hello"]), language=tf.constant(["de"]))


def test_languages_for_an_encoder_without_them_are_refused(models, tokenizer, tmp_path):
    from tfbert.export import export_saved_model

    with pytest.raises(ValueError, match="without language embeddings"):
        export_saved_model(models["regression"], "r", tokenizer=tokenizer, output_dir=tmp_path, languages=["en"])


def test_predict_sends_the_language(multilingual, capsys):
    from tfbert.cli import main
    from tfbert.export.client import predict_texts

    path = multilingual[1]
    signature = tf.saved_model.load(str(path)).signatures["serving_default"]
    served = signature(text=tf.constant(TEXTS[:2]), language=tf.constant(["fr", "fr"]))
    records = predict_texts(path, TEXTS[:2], language="fr")
    assert [record["language"] for record in records] == ["fr", "fr"]
    np.testing.assert_allclose([list(record["probabilities"].values()) for record in records],
                               served["probabilities"], atol=1e-6)
    assert main(["predict", str(path), TEXTS[0]]) == 2
    assert "has language embeddings: pass --language NAME (one of: en, fr)" in capsys.readouterr().err
    assert main(["predict", str(path), TEXTS[0], "--language", "de"]) == 2
    assert "--language 'de' is not one of this model's languages: en, fr" in capsys.readouterr().err
