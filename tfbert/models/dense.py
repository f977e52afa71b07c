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


def _on_rows(inputs, compute, units: int):
    """`compute` of `inputs` `[..., in]` flattened to `[rows, in]`, its `[rows, units]` result reshaped back."""
    if len(inputs.shape) <= 2:
        return compute(inputs)
    leading = ops.shape(inputs)[:-1]
    return ops.reshape(compute(ops.reshape(inputs, (-1, inputs.shape[-1]))), (*leading, units))


def matmul_rows(inputs, matrix):
    """`inputs @ matrix` for `inputs` `[..., in]`, computed as one `[rows, in] @ [in, out]` matmul.

    Example:
        >>> tuple(matmul_rows(keras.ops.ones((2, 5, 4)), keras.ops.ones((4, 3))).shape)
        (2, 5, 3)
    """
    return _on_rows(inputs, lambda rows: ops.matmul(rows, matrix), matrix.shape[-1])


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
        return _on_rows(inputs, lambda rows: super(Dense, self).call(rows, training=training), self.units)
