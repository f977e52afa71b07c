"""Gathering the vectors at chosen positions of a sequence, batch row by batch row."""

from __future__ import annotations

from keras import ops


def gather_positions(sequence, positions):
    """`sequence[b, positions[b, p]]` for every batch row: `[batch, length, d]` -> `[batch, predictions, d]`.

    Example:
        >>> sequence_output, masked_positions = ops.ones((2, 16, 128)), ops.array([[3, 5], [1, 9]])
        >>> tuple(gather_positions(sequence_output, masked_positions).shape)   # [batch, predictions, hidden]
        (2, 2, 128)
    """
    batch, length, width = ops.shape(sequence)[0], ops.shape(sequence)[1], ops.shape(sequence)[2]
    offsets = ops.arange(batch, dtype="int32")[:, None] * length
    flat = ops.reshape(sequence, (batch * length, width))
    return ops.take(flat, ops.cast(positions, "int32") + offsets, axis=0)
