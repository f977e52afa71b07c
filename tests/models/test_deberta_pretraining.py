"""DeBERTa-v3 pretraining: RTD with gradient-disentangled embedding sharing, plain MLM, and the fill-mask export."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from model_fixtures import pretraining_batch
from tfbert import architectures
from tfbert.config import ModelConfig
from tfbert.families.deberta.models import DebertaRTDModel
from tfbert.models.objectives import replica_share_of_mean

ENCODER = dict(vocab_size=120, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=48, max_positions=64,
               position_buckets=8, max_relative_positions=16)


@pytest.fixture(scope="module")
def config():
    """A tiny DeBERTa-v3 config (the family's defaults fill in relative positions, no type table, ...)."""
    return ModelConfig(architecture="deberta", encoder=ENCODER, generator={**ENCODER, "num_layers": 1})


@pytest.fixture(scope="module")
def rtd_model(config):
    keras.utils.set_random_seed(0)
    return architectures.get("deberta").build_pretraining_model(config, seed=0)


def _losses(model, x, y):
    y_pred = model(x, training=True)
    return {name: replica_share_of_mean(loss, weight) for name, (loss, _, weight) in model.objective_terms(x, y, y_pred).items()}


def test_rtd_gradients_reach_the_delta_but_not_the_generator_table(rtd_model, config):
    x, y = pretraining_batch(config)
    shared = rtd_model.generator.token_embedding.embeddings
    delta = rtd_model.discriminator.token_embedding.embeddings
    with tf.GradientTape(persistent=True) as tape:
        losses = _losses(rtd_model, x, y)
    rtd_on_shared, rtd_on_delta = tape.gradient(losses["rtd"], [shared, delta])
    mlm_on_shared, mlm_on_delta = tape.gradient(losses["mlm"], [shared, delta])
    assert isinstance(rtd_model, DebertaRTDModel)
    assert rtd_on_shared is None or not np.any(tf.convert_to_tensor(rtd_on_shared).numpy())
    assert np.any(tf.convert_to_tensor(rtd_on_delta).numpy())
    assert np.any(tf.convert_to_tensor(mlm_on_shared).numpy())
    assert mlm_on_delta is None


def test_one_rtd_step_trains_and_saves_the_merged_discriminator(rtd_model, config, tmp_path):
    x, y = pretraining_batch(config, seed=1)
    rtd_model.compile(optimizer=keras.optimizers.Adam(1e-2), jit_compile=False)
    history = rtd_model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    delta = rtd_model.discriminator.token_embedding.embeddings.numpy()
    assert np.any(delta), "the delta table starts at zero and RTD moves it"

    saved = keras.saving.load_model(rtd_model.save_encoder(str(tmp_path)))
    inputs = {name: x[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    np.testing.assert_allclose(saved(inputs)["sequence_output"], rtd_model.discriminator(inputs)["sequence_output"],
                               atol=1e-5)
    np.testing.assert_allclose(saved.token_embedding.embeddings.numpy(),
                               rtd_model.generator.token_embedding.embeddings.numpy() + delta, atol=1e-6)


def test_one_masked_lm_step(config):
    model = architectures.get("deberta").build_pretraining_model(config, objectives=["mlm"])
    x, y = pretraining_batch(config, seed=2)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), jit_compile=False)
    first, second = (model.train_on_batch(x, y, return_dict=True)["loss"] for _ in range(2))
    assert second < first


@pytest.mark.slow  # tracing the export's signatures costs about 30 s of CPU
def test_fill_mask_export_with_a_deberta_sentencepiece(assets, tmp_path):
    from tfbert.export import export_saved_model
    from tfbert.text.vocab_training import train_sentencepiece

    tokenizer = train_sentencepiece(str(assets("text/botchan.txt")), 300, tmp_path / "spm",
                                    control_tokens=("[CLS]", "[SEP]", "[MASK]"))
    config = ModelConfig(architecture="deberta", encoder={**ENCODER, "vocab_size": tokenizer.vocabulary_size()})
    model = architectures.get("deberta").build_pretraining_model(config, objectives=["mlm"])
    folder = export_saved_model(model, "deberta", tokenizer=tokenizer, output_dir=tmp_path / "saved",
                                sequence_length=16)
    served = tf.saved_model.load(str(folder)).signatures["serving_default"](
        text=tf.constant(["the [MASK] sat down.", "no mask"]))
    assert served, "the fill-mask signature answers"
    packed = tf.saved_model.load(str(folder)).signatures["preprocess"](text=tf.constant(["a b"]))
    ids = packed["input_word_ids"].numpy()[0]
    assert ids[0] == tokenizer.cls_id and tokenizer.sep_id in ids.tolist()
