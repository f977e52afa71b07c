"""Resizing the vocabulary keeps every existing row and weight."""

import numpy as np

from tfbert.models.encoder import build_encoder
from tfbert.models.pretraining import PretrainingModel
from tfbert.models.resize import resize_token_embeddings

from model_fixtures import pretraining_batch, tiny_config


def test_grown_pretraining_model_keeps_old_rows_and_outputs():
    config = tiny_config("bert")
    model = PretrainingModel(config)
    bigger = resize_token_embeddings(model, config.encoder.vocab_size + 5)
    old_table = model.encoder.token_embedding.embeddings.numpy()
    new_table = bigger.encoder.token_embedding.embeddings.numpy()
    assert new_table.shape == (config.encoder.vocab_size + 5, config.encoder.hidden_size)
    np.testing.assert_array_equal(new_table[: config.encoder.vocab_size], old_table)
    inputs, _ = pretraining_batch(config)
    before, after = model(inputs), bigger(inputs)
    np.testing.assert_allclose(after["mlm_logits"][..., : config.encoder.vocab_size], before["mlm_logits"], atol=1e-6)
    np.testing.assert_array_equal(after["nsp_logits"], before["nsp_logits"])
    np.testing.assert_array_equal(bigger.get_layer("mlm_head").output_bias.numpy()[config.encoder.vocab_size:], 0.0)


def test_resized_encoder_has_the_new_vocabulary_size():
    encoder = build_encoder(tiny_config("albert").encoder)
    smaller = resize_token_embeddings(encoder, 100)
    assert smaller.config.vocab_size == 100
    np.testing.assert_array_equal(
        smaller.token_embedding.embeddings.numpy(), encoder.token_embedding.embeddings.numpy()[:100])
