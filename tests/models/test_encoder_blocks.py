"""The encoder's block options: pre-LN, gated (GLU) feed-forward, rotary and relative positions."""

import numpy as np
import pytest

from tfbert.config import EncoderConfig
from tfbert.models.encoder import build_encoder
from tfbert.models.feedforward import FeedForward
from tfbert.models.relative import relative_buckets
from tfbert.models.rotary import rotary_angles, rotate

TINY = dict(vocab_size=60, hidden_size=16, num_layers=2, num_heads=2, intermediate_size=24, max_positions=32)


def _numpy_rotate(vectors, base=10000.0):
    """Rotary reference: each pair (i, i + d/2) at position p turned by p * base^(-2i/d)."""
    length, size = vectors.shape[1], vectors.shape[-1]
    half = size // 2
    angles = np.arange(length)[:, None] * base ** (-np.arange(half) * 2.0 / size)[None, :]
    cos, sin = np.cos(angles)[None, :, None, :], np.sin(angles)[None, :, None, :]
    first, second = vectors[..., :half], vectors[..., half:]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def test_rotary_rotation_matches_numpy_reference():
    vectors = np.random.default_rng(0).normal(size=(2, 7, 3, 8)).astype("float32")
    cos, sin = rotary_angles(7, 8)
    np.testing.assert_allclose(np.asarray(rotate(vectors, cos, sin)), _numpy_rotate(vectors), atol=1e-5)


def test_rotary_scores_depend_on_distance_only():
    rng = np.random.default_rng(1)
    query, key = rng.normal(size=(1, 1, 1, 8)), rng.normal(size=(1, 1, 1, 8))
    tiled = lambda vector: np.repeat(vector, 9, axis=1).astype("float32")  # noqa: E731
    cos, sin = rotary_angles(9, 8)
    rotated_query, rotated_key = np.asarray(rotate(tiled(query), cos, sin)), np.asarray(rotate(tiled(key), cos, sin))
    score = lambda i, j: float(rotated_query[0, i, 0] @ rotated_key[0, j, 0])  # noqa: E731
    assert score(2, 5) == pytest.approx(score(4, 7), abs=1e-4)
    assert score(0, 3) == pytest.approx(score(5, 8), abs=1e-4)


def test_gated_feed_forward_matches_numpy_glu():
    layer = FeedForward(hidden_size=4, intermediate_size=6, activation="silu", gated=True, dropout_rate=0.0)
    inputs = np.random.default_rng(2).normal(size=(2, 3, 4)).astype("float32")
    outputs = np.asarray(layer(inputs))
    dense = lambda sub, x: x @ np.asarray(sub.kernel) + np.asarray(sub.bias)  # noqa: E731
    gate = dense(layer.gate, inputs)
    inner = gate / (1 + np.exp(-gate)) * dense(layer.intermediate, inputs)
    summed = inputs + dense(layer.output_dense, inner)
    normed = (summed - summed.mean(-1, keepdims=True)) / np.sqrt(summed.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(outputs, normed, atol=1e-5)
    assert outputs.shape == inputs.shape


def test_pre_norm_feed_forward_keeps_the_residual_unnormalised():
    layer = FeedForward(hidden_size=4, intermediate_size=6, norm_first=True, dropout_rate=0.0)
    inputs = np.random.default_rng(3).normal(size=(1, 2, 4)).astype("float32") * 5
    outputs = np.asarray(layer(inputs))
    expected = inputs + np.asarray(layer.output_dense(layer.expand(layer.layer_norm(inputs))))
    np.testing.assert_allclose(outputs, expected, atol=1e-5)


def test_relative_buckets_keep_near_distances_and_compress_far_ones():
    buckets = np.asarray(relative_buckets(40, 8, 64))
    distance = np.arange(40)[:, None] - np.arange(40)[None, :]
    near = np.abs(distance) <= 4
    np.testing.assert_array_equal(buckets[near], distance[near])
    np.testing.assert_array_equal(buckets, -buckets.T)
    assert np.abs(buckets).max() < 8
    assert np.all(np.diff(buckets[-1]) <= 0)
    np.testing.assert_array_equal(np.asarray(relative_buckets(5, 0, 64)), distance[:5, :5])


@pytest.mark.parametrize("options", [
    {"norm_first": True, "feed_forward": "gated"},
    {"positions": "rotary"},
    {"positions": "relative", "position_buckets": 8, "type_vocab_size": 0},
    {"positions": "relative", "share_attention_key": False},
], ids=["pre-ln-glu", "rotary", "relative-buckets", "relative-separate-keys"])
def test_encoder_options_agree_with_encode_at_positions(options):
    encoder = build_encoder(EncoderConfig(**TINY, **options))
    rng = np.random.default_rng(4)
    mask = np.array([[1] * 9, [1] * 6 + [0] * 3], "int32")
    inputs = {"token_ids": rng.integers(1, 60, size=(2, 9)).astype("int32") * mask,
              "segment_ids": np.zeros((2, 9), "int32"), "padding_mask": mask}
    positions = np.array([[1, 4], [2, 5]], "int32")
    full = np.asarray(encoder(inputs)["sequence_output"])
    selected = np.asarray(encoder.encode_at_positions(inputs, positions)["sequence_output"])
    np.testing.assert_allclose(selected, np.take_along_axis(full, positions[:, :, None], axis=1), atol=1e-5)
    assert np.isfinite(full).all()


def test_configs_without_block_options_get_bert_blocks():
    config = EncoderConfig.from_dict({"vocab_size": 100})
    assert (config.norm_first, config.feed_forward, config.positions) == (False, "dense", "absolute")


@pytest.mark.parametrize("field,value", [("positions", "alibi"), ("feed_forward", "swiglu"),
                                         ("position_buckets", 2), ("norm_first", "yes")])
def test_bad_block_options_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        EncoderConfig(vocab_size=100, **{field: value})
