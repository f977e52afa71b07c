"""Dropout with a hashed mask: Keras's `Dropout`, with the random bits from an integer hash.

Written by hand because Keras gives no cheaper way: its dropout draws the mask with the backend's
random generator, which on the TensorFlow backend is `StatelessRandomUniformV2` with the
algorithm left to XLA, and XLA's CPU backend runs that about 100x slower than an explicit
Threefry (a 2.1M-element mask: 420 ms against 3.4 ms). Dropout then took a fifth of a BERT-small
training step on the CPU (benchmarks/RESULTS.md, "Training throughput"), and Keras cannot be told
which algorithm to use. Here each element's bit is a 32-bit integer hash of its flat index and a
fresh per-call seed from the layer's `SeedGenerator`, in `keras.ops`: a handful of integer
operations per element that XLA fuses into the consumer, on every backend. The hash is
Wellons' "lowbias32" finaliser, a bijection of 32-bit integers, so within one call no two
elements draw the same value; an element is kept when its value is at least `rate * 2**32`.
"""

from __future__ import annotations

import functools
import operator

import keras
import numpy as np
from keras import ops

_GOLDEN = np.uint32(0x9E3779B9)


def _u32(value: int):
    return ops.convert_to_tensor(np.uint32(value))


def _low32(x):
    """`x mod 2**32`: a no-op for uint32 (TensorFlow, JAX), needed where a backend holds uint32 as int64 (torch)."""
    return ops.bitwise_and(x, _u32(0xFFFFFFFF))


def _mix(x):
    """The lowbias32 finaliser: every output bit depends on every input bit."""
    x = ops.bitwise_xor(x, ops.right_shift(x, _u32(16)))
    x = _low32(ops.multiply(x, _u32(0x7FEB352D)))
    x = ops.bitwise_xor(x, ops.right_shift(x, _u32(15)))
    x = _low32(ops.multiply(x, _u32(0x846CA68B)))
    return ops.bitwise_xor(x, ops.right_shift(x, _u32(16)))


def hashed_keep_mask(shape, seed, rate: float):
    """A boolean `shape` mask, each element True with probability `1 - rate` (to 2**-32).

    `seed` is a `[2]` integer tensor (a `keras.random.SeedGenerator`'s draw).

    Example:
        >>> keep = hashed_keep_mask((4, 128), keras.random.SeedGenerator(1).next(), 0.1)
    """
    seed = _low32(ops.cast(seed, "uint32"))
    key = _mix(ops.bitwise_xor(_low32(ops.multiply(seed[0], _u32(_GOLDEN))), _mix(seed[1])))
    rows = functools.reduce(operator.mul, shape[:-1], 1)
    columns = shape[-1]
    index = _low32(ops.cast(ops.arange(rows, dtype="int32"), "uint32")[:, None] * ops.cast(columns, "uint32")
                   + ops.cast(ops.arange(columns, dtype="int32"), "uint32")[None, :])
    bits = _mix(ops.bitwise_xor(_low32(ops.multiply(index, _u32(_GOLDEN))), key))
    threshold = _u32(min(int(round(rate * 2**32)), 2**32 - 1))
    return ops.reshape(ops.greater_equal(bits, threshold), shape)


@keras.saving.register_keras_serializable(package="tfbert")
class Dropout(keras.layers.Dropout):
    """`keras.layers.Dropout` (same arguments, same scaling by `1 / (1 - rate)`) with a hashed mask.

    Example:
        >>> layer = Dropout(0.1, seed=0)
        >>> out = np.asarray(layer(np.ones((256, 256), "float32"), training=True))
        >>> round(float((out == 0).mean()), 2), [round(float(value), 3) for value in np.unique(out)]
        (0.1, [0.0, 1.111])
    """

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.noise_shape is not None:
            return super().call(inputs, training=training)
        keep = hashed_keep_mask(ops.shape(inputs), self.seed_generator.next(), self.rate)
        scale = ops.cast(1.0 / (1.0 - self.rate), inputs.dtype)
        return ops.where(keep, inputs * scale, ops.zeros_like(inputs))
