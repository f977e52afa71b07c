"""Rotary position embeddings (Su et al. 2021, https://arxiv.org/abs/2104.09864) in `keras.ops`.

Queries and keys are rotated by an angle proportional to their position, so their dot product
depends on the distance between them only. Pairs are (i, i + head_size / 2), the "rotate half"
layout of GPT-NeoX and Hugging Face's Llama. Written here because keras-hub's `RotaryEmbedding`
reads positions from the sequence axis only, and the encoder needs the same angles at the
gathered query positions of `encode_at_positions`.
"""

from __future__ import annotations

from keras import ops


def rotary_angles(length, head_size: int, base: float = 10000.0):
    """`(cos, sin)`, each `[length, head_size]` float32, for positions `0 .. length - 1`.

    Example:
        >>> cos, sin = rotary_angles(8, 64)
        >>> tuple(cos.shape)
        (8, 64)
    """
    exponents = ops.arange(0, head_size, 2, dtype="float32") / float(head_size)
    frequencies = ops.power(float(base), -exponents)
    angles = ops.arange(length, dtype="float32")[:, None] * frequencies[None, :]
    angles = ops.concatenate([angles, angles], axis=-1)
    return ops.cos(angles), ops.sin(angles)


def rotate(vectors, cos, sin):
    """`vectors` `[batch, length, heads, head_size]` rotated by the `[length, head_size]` angles."""
    half = ops.shape(vectors)[-1] // 2
    first, second = vectors[..., :half], vectors[..., half:]
    rotated_half = ops.concatenate([-second, first], axis=-1)
    cos = ops.cast(cos, vectors.dtype)[None, :, None, :]
    sin = ops.cast(sin, vectors.dtype)[None, :, None, :]
    return vectors * cos + rotated_half * sin
