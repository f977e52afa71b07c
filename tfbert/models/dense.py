"""Matmuls of per-token vectors on a matrix: the leading dimensions are flattened first.

Written by hand because Keras gives no switch for it: `Dense` on a `[batch, length, in]` input is
`ops.matmul(x, kernel)`, and on JAX the kernel's gradient is then a `dot_general` contracting two
dimensions whose result JAX transposes. XLA's CPU backend lays that out as a transposed copy of the
output gradient and a dot it cannot hand to its fast kernels: one `[8, 128, 512] @ [512, 2048]`
layer's forward and backward took 46 ms on JAX 0.10 against 26 ms for the same math on a
`[1024, 512]` matrix, and a BERT-small training step ran at 0.71x its TensorFlow speed
(`benchmarks/jax_vs_tensorflow.py`, benchmarks/RESULTS.md 2026-12-02). Flattening is a reshape of
contiguous dimensions (free on every backend and under any batch sharding), and the matmul is the
same, so outputs and weights are unchanged: the variables keep `Dense`'s names. The tied decoders'
`hidden @ table.T` (`TokenEmbedding(reverse=True)`) gains the same way (`matmul_rows`).
"""

from __future__ import annotations

import keras
from keras import ops


def matmul_rows(inputs, matrix):
    """`inputs @ matrix` for `inputs` `[..., in]`, computed as one `[rows, in] @ [in, out]` matmul.

    Example:
        >>> tuple(matmul_rows(keras.ops.ones((2, 5, 4)), keras.ops.ones((4, 3))).shape)
        (2, 5, 3)
    """
    if len(inputs.shape) <= 2:
        return ops.matmul(inputs, matrix)
    leading = ops.shape(inputs)[:-1]
    flat = ops.matmul(ops.reshape(inputs, (-1, inputs.shape[-1])), matrix)
    return ops.reshape(flat, (*leading, matrix.shape[-1]))


class Dense(keras.layers.Dense):
    """`keras.layers.Dense`, computed on the input flattened to `[rows, in]` and reshaped back.

    Used for the encoder's per-token projections (attention, feed-forward, embedding projection,
    heads); it is built inside tfbert's own layers, which serialize their arguments, never itself.

    Example:
        >>> layer = Dense(8, name="intermediate")
        >>> tuple(layer(keras.ops.ones((2, 5, 4))).shape)
        (2, 5, 8)
    """

    def call(self, inputs, training=None):
        if len(inputs.shape) <= 2:
            return super().call(inputs, training=training)
        leading = ops.shape(inputs)[:-1]
        flat = ops.reshape(inputs, (-1, inputs.shape[-1]))
        return ops.reshape(super().call(flat, training=training), (*leading, self.units))
