"""Every registered family, on its tiny config: build, call, save and load; Hugging Face parity and
conversion both ways; two pretraining steps; two fine-tuning steps, export and predict.

A family gets these checks by registering (`tfbert.architectures.register`); docs/conformance.md.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
from conformance_families import LENGTH, counting_traces, encoder_inputs, pretraining_batch

from tfbert.models.encoder import Encoder

TOLERANCE = 1e-4


def _assert_equal_outputs(first, second):
    assert set(first) == set(second)
    for name in first:
        np.testing.assert_array_equal(np.asarray(first[name]), np.asarray(second[name]), err_msg=name)


def test_pretraining_model_builds_calls_and_round_trips_through_keras_file(config, tmp_path):
    model = config.spec.build_pretraining_model(config, seed=0)
    model.check_family(config.spec, config.spec.default_objectives)      # the class built accepts its family
    inputs, _ = pretraining_batch(model)
    outputs = model(inputs, training=False)
    assert all(np.isfinite(np.asarray(value, dtype="float64")).all() for value in outputs.values())

    model.save(tmp_path / "model.keras")
    restored = keras.models.load_model(tmp_path / "model.keras")
    assert type(restored) is type(model) and restored.config == config
    # As many weights of the same shapes: tied tables (a masked-LM head's) stay tied, none is saved twice.
    assert [tuple(weight.shape) for weight in restored.weights] == [tuple(weight.shape) for weight in model.weights]
    # After the save: a sampler's seed state (ELECTRA's) is saved as it stands.
    _assert_equal_outputs(model(inputs, training=False), restored(inputs, training=False))


def test_pretraining_model_trains_two_steps_and_its_step_lowers_to_xla(config):
    """Two steps of `fit`, the train step traced once (the optimizer built before, `tfbert.models.fitting`); then
    that train step lowered to one XLA HLO module at the batch's static shapes, as `tfbert pretrain` compiles it on
    a TPU or GPU. Lowering is where a family's ops or shapes fail XLA; compiling the module for this CPU and running
    it would add seconds per family that test XLA's CPU backend, not the family (`tests/training` runs XLA steps)."""
    model = config.spec.build_pretraining_model(config, seed=0)
    inputs, labels = pretraining_batch(model)
    before = [np.array(weight) for weight in model.encoder.trainable_weights]
    model.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=False)
    traces = counting_traces(model)
    history = model.fit(tf.data.Dataset.from_tensors((inputs, labels)).repeat(2), verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 2 and len(traces) == 1
    assert np.isfinite(history.history["loss"]).all()
    assert {f"{objective}_loss" for objective in config.spec.default_objectives} <= set(history.history)
    assert any(not np.array_equal(old, new) for old, new in zip(before, model.encoder.trainable_weights))

    batch = tf.nest.map_structure(tf.constant, (inputs, labels))
    hlo = tf.function(model.train_step, jit_compile=True).experimental_get_compiler_ir(batch)(stage="hlo")
    assert hlo.startswith("HloModule")


def test_fine_tuned_classifier_exports_and_predicts_as_in_memory(config, wordpiece, tmp_path):
    from tfbert.export import export_saved_model
    from tfbert.tasks import SequenceClassifier

    classifier = SequenceClassifier(Encoder(config.encoder, name="encoder"), num_classes=2)
    inputs = {name: value for name, value in encoder_inputs(config.encoder).items() if name in classifier.input}
    classifier.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=False)
    history = classifier.fit(tf.data.Dataset.from_tensors((inputs, np.array([0, 1, 0]))).repeat(2), verbose=0)
    assert int(classifier.optimizer.iterations.numpy()) == 2 and np.isfinite(history.history["loss"]).all()

    if config.encoder.position_ids_input:
        pytest.skip("encoders with a position_ids input are not exportable yet")
    target = export_saved_model(classifier, "conformance", tokenizer=wordpiece, output_dir=tmp_path,
                                sequence_length=LENGTH, label_names=["no", "yes"])
    served = tf.saved_model.load(str(target))
    texts = tf.constant(["the cat sat on the mat.", "hello world"])
    packed = served.signatures["preprocess"](text=texts)
    features = {"token_ids": packed["input_word_ids"], "padding_mask": packed["input_mask"],
                "segment_ids": packed["input_type_ids"]}
    expected = classifier({name: features[name] for name in classifier.input}, training=False)["logits"]
    np.testing.assert_allclose(served.signatures["serving_default"](text=texts)["logits"], expected, atol=1e-5)


def _huggingface_format(config):
    if "huggingface" not in config.spec.formats:
        pytest.skip(f"{config.architecture} has no Hugging Face format")
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return config.spec.format("huggingface")


def _huggingface_outputs(reference, config, inputs):
    import torch

    hf_inputs = {"input_ids": torch.tensor(inputs["token_ids"], dtype=torch.long),
                 "attention_mask": torch.tensor(inputs["padding_mask"], dtype=torch.long)}
    if config.encoder.type_vocab_size >= 2:
        hf_inputs["token_type_ids"] = torch.tensor(inputs["segment_ids"], dtype=torch.long)
    with torch.no_grad():
        return reference.eval()(**hf_inputs).last_hidden_state.numpy()


def test_huggingface_checkpoint_converts_in_with_transformers_outputs(config, tmp_path):
    """A random `transformers` model of the family's `config.json` (`write_config`) reads back with its outputs."""
    entry = _huggingface_format(config)
    if not entry.reads:
        pytest.skip(f"{config.architecture}'s checkpoints are read as another family's ({entry.model_type})")
    import torch
    import transformers

    from tfbert.convert.huggingface import load_huggingface

    torch.manual_seed(0)
    hf_config = transformers.AutoConfig.for_model(entry.model_type, **entry.write_config(config.encoder))
    transformers.AutoModel.from_config(hf_config).save_pretrained(tmp_path / "hf")
    reference = transformers.AutoModel.from_pretrained(tmp_path / "hf")

    encoder = load_huggingface(tmp_path / "hf")
    assert encoder.config == config.encoder
    inputs = {name: value for name, value in encoder_inputs(config.encoder).items() if name in encoder.input}
    keep = inputs["padding_mask"].astype(bool)
    ours = np.asarray(encoder(inputs, training=False)["sequence_output"])
    theirs = _huggingface_outputs(reference, config, inputs)
    np.testing.assert_allclose(ours[keep], theirs[keep], atol=TOLERANCE, rtol=0)


def test_encoder_converts_out_to_transformers_and_back_with_its_outputs(config, tmp_path):
    _huggingface_format(config)
    import transformers

    from tfbert.convert.huggingface import load_huggingface
    from tfbert.convert.to_huggingface import write_huggingface

    encoder = Encoder(config.encoder, name="encoder")
    inputs = {name: value for name, value in encoder_inputs(config.encoder).items() if name in encoder.input}
    keep = inputs["padding_mask"].astype(bool)
    ours = np.asarray(encoder(inputs, training=False)["sequence_output"])
    write_huggingface(encoder, tmp_path / "hf", config.architecture)

    reference, info = transformers.AutoModel.from_pretrained(tmp_path / "hf", output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    theirs = _huggingface_outputs(reference, config, inputs)
    np.testing.assert_allclose(ours[keep], theirs[keep], atol=TOLERANCE, rtol=0)
    loaded = load_huggingface(tmp_path / "hf")
    np.testing.assert_allclose(np.asarray(loaded(inputs, training=False)["sequence_output"]), ours, atol=1e-6, rtol=0)


def test_shipped_configs_load_as_the_family(family):
    """Each config the family ships (`<package>/configs/*.yaml`, `tfbert configs`) loads by name as that family."""
    from tfbert.config import configs_of, load_config

    for name in configs_of(family):
        config = load_config(name)
        assert config.architecture == family and config.spec.name == family, name
