"""Parity with Hugging Face `transformers` for ELECTRA, XLM and XLM-R through the real loader; SpanBERT's SBO against NumPy."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tfbert.config import EncoderConfig, ModelConfig  # noqa: E402
from tfbert.convert.huggingface import load_huggingface, load_state_dict, read_state_dict  # noqa: E402
from tfbert.families.electra.checkpoints import load_electra  # noqa: E402
from tfbert.families.spanbert.models import SpanBertPretrainingModel  # noqa: E402
from tfbert.families.xlm.models import XLMPretrainingModel, tlm_position_ids  # noqa: E402

TOLERANCE = 1e-4
VOCAB = 99


def _batch(seed=0, batch=3, length=12, predictions=4, low=5):
    """Right-padded ids (pad 0), their mask, and masked positions inside the real tokens (never 0)."""
    rng = np.random.default_rng(seed)
    lengths = [length, length - 3, 6]
    ids = rng.integers(low, VOCAB, size=(batch, length)).astype("int32")
    mask = (np.arange(length)[None, :] < np.array(lengths)[:, None]).astype("int32")
    ids = ids * mask
    positions = np.stack([rng.choice(np.arange(1, n), size=predictions, replace=False) for n in lengths]).astype("int32")
    return ids, mask, positions


def _at(logits, positions):
    return np.take_along_axis(logits, positions[:, :, None].astype(np.int64), axis=1)


def _long(array):
    return torch.tensor(np.asarray(array), dtype=torch.long)


def _close_on_real_tokens(ours, theirs, mask):
    keep = np.asarray(mask).astype(bool)
    np.testing.assert_allclose(np.asarray(ours)[keep], np.asarray(theirs)[keep], atol=TOLERANCE, rtol=0)


def _electra_checkpoints(folder, tie_embeddings=True):
    torch.manual_seed(0)
    common = dict(vocab_size=VOCAB, embedding_size=16, max_position_embeddings=64, type_vocab_size=2)
    discriminator = transformers.ElectraForPreTraining(transformers.ElectraConfig(
        **common, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=37)).eval()
    # Narrower than the embeddings (8 < 16), as ELECTRA-small's generator (64 < 128).
    generator = transformers.ElectraForMaskedLM(transformers.ElectraConfig(
        **common, hidden_size=8, num_hidden_layers=3, num_attention_heads=2, intermediate_size=16)).eval()
    if tie_embeddings:
        generator.electra.embeddings.load_state_dict(discriminator.electra.embeddings.state_dict())
    discriminator.save_pretrained(folder / "discriminator")
    generator.save_pretrained(folder / "generator")
    return discriminator, generator


def test_electra_generator_and_discriminator_match_transformers(tmp_path):
    discriminator, generator = _electra_checkpoints(tmp_path)
    model = load_electra(tmp_path / "discriminator", tmp_path / "generator", seed=0)
    assert model.config.generator.hidden_size == 8 and model.config.encoder.hidden_size == 32
    assert model.generator.get_layer("embeddings") is model.discriminator.get_layer("embeddings")

    ids, mask, positions = _batch()
    segments = np.zeros_like(ids)
    ours = model({"token_ids": ids, "segment_ids": segments, "padding_mask": mask, "masked_positions": positions},
                 training=False)
    corrupted = np.asarray(ours["corrupted_ids"])
    with torch.no_grad():
        generator_logits = generator(input_ids=_long(ids), attention_mask=_long(mask), token_type_ids=_long(segments)).logits
        discriminator_logits = discriminator(
            input_ids=_long(corrupted), attention_mask=_long(mask), token_type_ids=_long(segments)).logits
    np.testing.assert_allclose(ours["mlm_logits"], _at(generator_logits.numpy(), positions), atol=TOLERANCE, rtol=0)
    _close_on_real_tokens(ours["rtd_logits"], discriminator_logits.numpy(), mask)


def test_electra_loader_warns_when_the_generator_embeddings_differ(tmp_path):
    _electra_checkpoints(tmp_path, tie_embeddings=False)
    with pytest.warns(UserWarning, match="generator's embeddings differ"):
        load_electra(tmp_path / "discriminator", tmp_path / "generator")


def test_electra_discriminator_encoder_alone_matches_transformers(tmp_path):
    discriminator, _ = _electra_checkpoints(tmp_path)
    with pytest.warns(UserWarning, match="4 checkpoint tensor.*discriminator_predictions"):
        encoder = load_huggingface(tmp_path / "discriminator")
    assert not encoder.config.pooler
    ids, mask, _ = _batch(seed=1)
    segments = (np.arange(ids.shape[1]) >= 4).astype("int32")[None, :] * mask
    ours = encoder({"token_ids": ids, "segment_ids": segments, "padding_mask": mask}, training=False)
    with torch.no_grad():
        theirs = discriminator.electra(input_ids=_long(ids), attention_mask=_long(mask), token_type_ids=_long(segments))
    _close_on_real_tokens(ours["sequence_output"], theirs.last_hidden_state.numpy(), mask)
    np.testing.assert_array_equal(ours["pooled_output"], np.asarray(ours["sequence_output"])[:, 0])


def _xlm_reference(folder, causal):
    torch.manual_seed(0)
    config = transformers.XLMConfig(
        vocab_size=VOCAB, emb_dim=32, n_layers=3, n_heads=4, n_langs=3, use_lang_emb=True, causal=causal,
        max_position_embeddings=64, pad_index=2, pad_token_id=2)
    reference = transformers.XLMWithLMHeadModel(config).eval()
    reference.save_pretrained(folder)
    return reference


def test_xlm_tlm_with_language_embeddings_and_restarting_positions_matches_transformers(tmp_path):
    reference = _xlm_reference(tmp_path, causal=False)
    converted = load_huggingface(tmp_path, heads=True)
    assert isinstance(converted, XLMPretrainingModel) and converted.objective == "mlm"
    assert converted.config.encoder.num_languages == 3 and converted.config.encoder.type_vocab_size == 0
    # TLM: the same weights in a model that reads position ids, as the xlm configs do.
    config = converted.config.replace(encoder=converted.config.encoder.replace(position_ids_input=True))
    model = XLMPretrainingModel(config)
    assert load_state_dict(model, read_state_dict(tmp_path), "xlm") == []

    ids, mask, positions = _batch(seed=2)
    ids = np.where(mask == 1, ids, 2).astype("int32")
    second = ((np.arange(ids.shape[1])[None, :] >= mask.sum(1, keepdims=True) // 2) * mask).astype("int32")
    languages = np.where(second == 1, 2, 1).astype("int32")
    position_ids = np.asarray(tlm_position_ids(second, mask))
    assert position_ids[0].tolist() == [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5]
    ours = model({"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": mask, "language_ids": languages,
                  "position_ids": position_ids, "masked_positions": positions}, training=False)
    with torch.no_grad():
        theirs = reference(input_ids=_long(ids), attention_mask=_long(mask), langs=_long(languages),
                           position_ids=_long(position_ids)).logits
    np.testing.assert_allclose(ours["mlm_logits"], _at(theirs.numpy(), positions), atol=TOLERANCE, rtol=0)


def test_causal_xlm_matches_transformers(tmp_path):
    reference = _xlm_reference(tmp_path, causal=True)
    model = load_huggingface(tmp_path, heads=True)
    assert model.objective == "clm" and model.encoder.causal
    ids, mask, _ = _batch(seed=3)
    ids = np.where(mask == 1, ids, 2).astype("int32")
    languages = np.ones_like(ids)
    ours = model({"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": mask, "language_ids": languages},
                 training=False)
    with torch.no_grad():
        theirs = reference(input_ids=_long(ids), attention_mask=_long(mask), langs=_long(languages)).logits
    _close_on_real_tokens(ours["lm_logits"], theirs.numpy(), mask)


def test_xlm_roberta_masked_lm_matches_transformers(tmp_path):
    torch.manual_seed(0)
    config = transformers.XLMRobertaConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=37,
        max_position_embeddings=40, type_vocab_size=1, pad_token_id=1, layer_norm_eps=1e-5)
    reference = transformers.XLMRobertaForMaskedLM(config).eval()
    reference.save_pretrained(tmp_path)
    with pytest.warns(UserWarning, match="no pooler"):
        model = load_huggingface(tmp_path, heads=True)
    assert model.config.architecture == "xlmr" and model.config.encoder.position_offset == 2

    ids, mask, positions = _batch(seed=4, length=30)
    ids = np.where(mask == 1, ids, 1).astype("int32")
    ours = model({"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": mask, "masked_positions": positions},
                 training=False)
    with torch.no_grad():
        theirs = reference(input_ids=_long(ids), attention_mask=_long(mask)).logits
    np.testing.assert_allclose(ours["mlm_logits"], _at(theirs.numpy(), positions), atol=TOLERANCE, rtol=0)


def _layer_norm(x, layer):
    gamma, beta = (w.numpy() for w in layer.weights)
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + layer.epsilon) * gamma + beta


def _gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def test_span_boundary_head_is_the_papers_formula():
    config = ModelConfig("spanbert", EncoderConfig(
        vocab_size=VOCAB, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=48, max_positions=64))
    model = SpanBertPretrainingModel(config)
    head = model.get_layer("sbo_head")
    rng = np.random.default_rng(5)
    for weight in head.weights:   # non-trivial LayerNorm and bias values
        weight.assign(weight.numpy() + rng.normal(0, 0.1, weight.shape).astype("float32"))
    ids, mask, positions = _batch(seed=5)
    left = np.maximum(positions - 2, 0).astype("int32")
    right = np.minimum(positions + 1, ids.shape[1] - 1).astype("int32")
    offsets = (positions - left).astype("int32")
    inputs = {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": mask, "masked_positions": positions,
              "span_left_positions": left, "span_right_positions": right, "span_offsets": offsets}
    ours = model(inputs, training=False)["sbo_logits"]

    x = np.asarray(model.encoder({k: inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")},
                                 training=False)["sequence_output"])
    rows = np.arange(len(x))[:, None]
    p = head.position_embedding.embeddings.numpy()[offsets]
    h0 = np.concatenate([x[rows, left], x[rows, right], p], axis=-1)
    w1, b1 = (w.numpy() for w in head.first.weights)
    w2, b2 = (w.numpy() for w in head.second.weights)
    h1 = _layer_norm(_gelu(h0 @ w1 + b1), head.first_norm)
    y = _layer_norm(_gelu(h1 @ w2 + b2), head.second_norm)
    expected = y @ model.encoder.token_embedding.embeddings.numpy().T + head.output_bias.numpy()
    np.testing.assert_allclose(ours, expected, atol=TOLERANCE, rtol=0)
