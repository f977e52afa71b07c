"""ELECTRA's corruption: which tokens are labelled replaced, seeded sampling, and where gradients flow."""

import numpy as np
import pytest
import tensorflow as tf

from tfbert.config import EncoderConfig, ModelConfig, scaled_generator
from tfbert.families.electra.models import ElectraPretrainingModel, replace_at_positions, replaced_token_labels
from tfbert.models.objectives import replica_share_of_mean

from family_models import batch_for, tiny_config, tiny_model


def test_replacements_skip_position_zero_where_unused_slots_point():
    tokens = np.array([[101, 7, 8, 9, 0]], "int32")
    replaced = replace_at_positions(tokens, np.array([[2, 0, 3]]), np.array([[50, 51, 52]]))
    assert np.asarray(replaced).tolist() == [[101, 7, 50, 52, 0]]


def test_labels_are_one_exactly_where_the_sample_differs_from_the_original():
    model = tiny_model("electra", seed=0)
    inputs, labels = batch_for(model.config, batch=6, predictions=4)
    # Make the generator all but certain to sample token 9, and make token 9 the original in half the slots.
    head = model.get_layer("generator_head")
    bias = np.zeros(model.config.encoder.vocab_size, "float32")
    bias[9] = 1e4
    head.output_bias.assign(bias)
    labels["masked_ids"][:, ::2] = 9
    outputs = model(inputs, training=False)
    sampled = np.asarray(outputs["sampled_ids"])
    assert (sampled == 9).all()

    rtd_labels = np.asarray(replaced_token_labels(
        inputs["token_ids"], inputs["masked_positions"], labels["masked_ids"], labels["masked_weights"],
        outputs["corrupted_ids"]))
    expected = np.zeros_like(rtd_labels)
    for row, (positions, weights) in enumerate(zip(inputs["masked_positions"], labels["masked_weights"])):
        for slot, (position, weight) in enumerate(zip(positions, weights)):
            if weight > 0:
                expected[row, position] = float(sampled[row, slot] != labels["masked_ids"][row, slot])
    np.testing.assert_array_equal(rtd_labels, expected)
    assert expected.sum() == (labels["masked_weights"][:, 1::2] > 0).sum() > 0
    corrupted = np.asarray(outputs["corrupted_ids"])
    assert (corrupted[:, 0] == inputs["token_ids"][:, 0]).all()


def test_seeded_sampling_repeats_and_moves_on():
    first, second = tiny_model("electra", seed=7), tiny_model("electra", seed=7)
    second.set_weights(first.get_weights())
    inputs, _ = batch_for(first.config, batch=8)
    draws = [np.asarray(first(inputs, training=False)["sampled_ids"]) for _ in range(2)]
    again = [np.asarray(second(inputs, training=False)["sampled_ids"]) for _ in range(2)]
    np.testing.assert_array_equal(draws[0], again[0])
    np.testing.assert_array_equal(draws[1], again[1])
    assert not np.array_equal(draws[0], draws[1])


def test_no_gradient_reaches_the_generator_through_the_sample():
    model = tiny_model("electra", seed=0)
    inputs, labels = batch_for(model.config)
    shared = {id(v) for v in model.discriminator.get_layer("embeddings").trainable_variables}
    generator_variables = model.generator.trainable_variables + model.get_layer("generator_head").trainable_variables
    generator_only = [v for v in generator_variables if id(v) not in shared]
    assert len(generator_only) == 2 * 12 + 5   # 2 layers; the head's transform, norm and bias
    with tf.GradientTape(persistent=True) as tape:
        outputs = model(inputs, training=True)
        means = {name: replica_share_of_mean(loss, weight)
                 for name, (loss, _, weight) in model.objective_terms(inputs, labels, outputs).items()}
    rtd_gradients = tape.gradient(means["rtd"], generator_only)
    assert all(g is None or not np.any(np.asarray(g)) for g in rtd_gradients)
    mlm_gradients = tape.gradient(means["mlm"], generator_only)
    assert all(g is not None and np.any(np.asarray(g)) for g in mlm_gradients)
    embedding_gradient = tape.gradient(means["rtd"], model.discriminator.token_embedding.embeddings)
    assert np.any(np.asarray(tf.convert_to_tensor(embedding_gradient)))


def test_scaled_generator_follows_the_paper_and_config_validation_names_the_problem():
    small = EncoderConfig(vocab_size=30522, hidden_size=256, embedding_size=128, num_heads=4, intermediate_size=1024)
    generator = scaled_generator(small, 0.25)
    assert (generator.hidden_size, generator.num_heads, generator.intermediate_size) == (64, 1, 256)
    assert generator.embedding_size == 128 and not generator.pooler
    base = EncoderConfig(vocab_size=30522)
    assert scaled_generator(base, 1 / 3).hidden_size == 256
    with pytest.raises(ValueError, match="'generator.vocab_size'.*shares the discriminator's embeddings"):
        ModelConfig("electra", small, generator=generator.replace(vocab_size=100))
    with pytest.raises(ValueError, match="'generator'.*only architecture 'electra'"):
        ModelConfig("bert", small, generator=generator)
    with pytest.raises(ValueError, match="'generator_fraction'.*\\(0, 1\\]"):
        scaled_generator(small, 1.5)
    with pytest.raises(ValueError, match="needs config.generator"):
        ElectraPretrainingModel(ModelConfig("electra", small))
    config = tiny_config("electra")
    assert ModelConfig.from_dict(config.to_dict()) == config


def _numpy_objectives(inputs, labels, outputs):
    """MLM and RTD means recomputed in numpy from the model's outputs, the way the paper defines them."""
    logits = np.asarray(outputs["mlm_logits"], "float64")
    log_probs = logits - logits.max(-1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
    weights = labels["masked_weights"]
    cross_entropy = -np.take_along_axis(log_probs, labels["masked_ids"][..., None], -1)[..., 0]
    mlm = (cross_entropy * weights).sum() / weights.sum()

    # The original sequence: the masked input with the true ids put back at the used slots.
    original = inputs["token_ids"].copy()
    rows, slots = np.nonzero(weights > 0)
    original[rows, inputs["masked_positions"][rows, slots]] = labels["masked_ids"][rows, slots]
    replaced = (np.asarray(outputs["corrupted_ids"]) != original).astype("float64")
    z = np.asarray(outputs["rtd_logits"], "float64")
    bce = np.maximum(z, 0) - z * replaced + np.log1p(np.exp(-np.abs(z)))
    real = inputs["padding_mask"].astype("float64")
    return mlm, (bce * real).sum() / real.sum(), replaced


def test_loss_is_mlm_plus_50_rtd_averaged_over_the_real_tokens_of_the_sampled_sequence():
    model = tiny_model("electra", seed=3)
    inputs, labels = batch_for(model.config, batch=4, length=16, predictions=4)
    assert (inputs["padding_mask"] == 0).any()   # padding must not count in the RTD mean
    outputs = model(inputs, training=False)

    # The discriminator reads the masked input with the generator's samples at the used slots ...
    sampled = np.asarray(outputs["sampled_ids"])
    corrupted = np.asarray(outputs["corrupted_ids"])
    expected = inputs["token_ids"].copy()
    rows, slots = np.nonzero(labels["masked_weights"] > 0)
    expected[rows, inputs["masked_positions"][rows, slots]] = sampled[rows, slots]
    np.testing.assert_array_equal(corrupted, expected)
    assert not (corrupted == 4).any()   # no [MASK] (id 4 in batch_for) reaches the discriminator
    # ... and its logits are those of the discriminator on exactly that sequence.
    encoder_inputs = {name: inputs[name] for name in model.discriminator.input}
    sequence = model.discriminator({**encoder_inputs, "token_ids": corrupted}, training=False)["sequence_output"]
    np.testing.assert_allclose(model.get_layer("discriminator_head")(sequence), outputs["rtd_logits"], atol=1e-5)

    mlm, rtd, replaced = _numpy_objectives(inputs, labels, outputs)
    assert 0 < replaced.sum() <= (labels["masked_weights"] > 0).sum()
    np.testing.assert_allclose(model.replaced_labels(inputs, labels, outputs), replaced)
    np.testing.assert_allclose(float(model.compute_loss(inputs, labels, outputs)), mlm + 50.0 * rtd, rtol=1e-5)


def test_the_weighted_rtd_gradient_reaches_every_discriminator_variable():
    model = tiny_model("electra", seed=0)
    inputs, labels = batch_for(model.config)
    shared = {id(v) for v in model.discriminator.get_layer("embeddings").trainable_variables}
    discriminator_only = [v for v in model.discriminator.trainable_variables +
                          model.get_layer("discriminator_head").trainable_variables if id(v) not in shared]
    with tf.GradientTape(persistent=True) as tape:
        outputs = model(inputs, training=True)
        total = model.compute_loss(inputs, labels, outputs)
        loss, _, weight = model.objective_terms(inputs, labels, outputs)["rtd"]
        rtd = replica_share_of_mean(loss, weight)
    total_gradients = tape.gradient(total, discriminator_only)
    rtd_gradients = tape.gradient(rtd, discriminator_only)
    for variable, from_total, from_rtd in zip(discriminator_only, total_gradients, rtd_gradients):
        assert from_total is not None and np.any(np.asarray(from_total)), variable.path
        np.testing.assert_allclose(from_total, 50.0 * np.asarray(from_rtd), rtol=1e-4, atol=1e-7,
                                   err_msg=variable.path)


def test_fit_trains_the_discriminator_to_flag_detectable_replacements():
    """Through fit, compute_loss and the metrics: replacements that can be told apart get detected.

    The generator is made to sample token 9, which the original sequences never contain, so
    "token 9 here" means "replaced"; after a few updates recall and precision of the
    replaced class (rtd_recall, rtd_precision) beat the always-original baseline (recall 0).
    """
    import keras

    keras.utils.set_random_seed(0)
    model = tiny_model("electra", seed=0)
    inputs, labels = batch_for(model.config, batch=8, length=16, predictions=3)
    for array in (inputs["token_ids"], labels["masked_ids"]):
        array[array == 9] = 10
    bias = np.zeros(model.config.encoder.vocab_size, "float32")
    bias[9] = 1e4
    model.get_layer("generator_head").output_bias.assign(bias)
    dataset = tf.data.Dataset.from_tensors((inputs, labels))
    model.compile(optimizer=keras.optimizers.Adam(3e-3), jit_compile=False)
    before = model.evaluate(dataset, verbose=0, return_dict=True)
    model.fit(dataset.repeat(), steps_per_epoch=60, epochs=1, verbose=0)
    after = model.evaluate(dataset, verbose=0, return_dict=True)
    assert before["rtd_loss"] > 0.5
    assert after["rtd_recall"] > 0.9 and after["rtd_precision"] > 0.9, after
