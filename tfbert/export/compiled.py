"""Small batches through an XLA-compiled model at bucketed shapes: the batch-1 latency of a served SavedModel.

TensorFlow runs a graph op by op. For one short text the encoder's few hundred small ops cost about as much to
dispatch as to compute, so an exported model answers a single request slower than a fused runtime
(ONNX Runtime) does. XLA compiles the whole model call into a few fused kernels. It compiles once per
input shape, so a small batch is padded to a bucketed shape first: its rows to the next power of two (up
to `max_batch`; the padding rows repeat the first one and are dropped from the outputs) and its length to
the next of `lengths` (every 16 positions up to 128, then doubling up to the sequence length; padding
positions are masked out as any padding is). A process compiles at most `len(row_buckets) *
len(lengths)` programs, each on the first request of its shape. Batches over `max_batch` rows keep the
plain graph at the batch's longest row, where TensorFlow's own (oneDNN) kernels are faster than XLA:CPU's.

TF Serving runs XLA:CPU only when started with `--xla_cpu_compilation_enabled=true`; `tf.saved_model.load`
runs it as is.

Example:
    >>> compiled = SmallBatchCompilation(max_batch=8)
    >>> compiled.lengths(128), compiled.lengths(512), compiled.row_buckets()
    ((16, 32, 48, 64, 80, 96, 112, 128), (16, 32, 48, 64, 80, 96, 112, 128, 256, 512), (1, 2, 4, 8))
    >>> outputs = compiled.call(run_model, packed_inputs, trim_padding)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Mapping

import tensorflow as tf

# Length buckets are this many positions apart up to `FINE_BUCKETS_UP_TO`, then double: a short text is
# padded by at most 15 positions, and a long sequence length still gets few buckets.
BUCKET_STEP = 16
FINE_BUCKETS_UP_TO = 128

Inputs = Mapping[str, tf.Tensor]


def _doubling(smallest: int, largest: int, below: tuple[int, ...] = ()) -> tuple[int, ...]:
    """`below`, then `smallest`, twice that, ... while below `largest`, then `largest` itself."""
    sizes, size = list(below), smallest
    while size < largest:
        sizes.append(size)
        size *= 2
    return tuple(sizes) + (largest,)


def _next_bucket(size: tf.Tensor, buckets: tuple[int, ...]) -> tf.Tensor:
    """The smallest of `buckets` (ascending) that is at least `size` (the largest bucket beyond them)."""
    candidates = tf.constant(buckets, tf.int32)
    return tf.gather(candidates, tf.minimum(tf.reduce_sum(tf.cast(candidates < size, tf.int32)), len(buckets) - 1))


@dataclasses.dataclass(frozen=True)
class SmallBatchCompilation:
    """Batches of at most `max_batch` rows run an XLA-compiled model call at bucketed shapes.

    `buckets` are the lengths a small batch is padded to (by default every 16 up to 128, then doubling, and
    the sequence length).
    """

    max_batch: int = 8
    buckets: tuple[int, ...] | None = None

    def __post_init__(self):
        if self.max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {self.max_batch}")
        if self.buckets is not None and (not self.buckets or min(self.buckets) < 1):
            raise ValueError(f"buckets must be positive lengths, got {self.buckets}")

    def lengths(self, sequence_length: int) -> tuple[int, ...]:
        """The length buckets for inputs packed to `sequence_length`, ascending, the last `sequence_length`."""
        if self.buckets is None:
            fine = range(BUCKET_STEP, min(FINE_BUCKETS_UP_TO, sequence_length) + 1, BUCKET_STEP)
            return _doubling(fine[-1] if fine else sequence_length, sequence_length, tuple(fine)[:-1])
        return tuple(sorted({bucket for bucket in self.buckets if bucket < sequence_length} | {sequence_length}))

    def row_buckets(self) -> tuple[int, ...]:
        """The row counts a small batch is padded to: 1, 2, 4, ... up to `max_batch`."""
        return _doubling(1, self.max_batch)

    def call(self, function: Callable[[Inputs], dict], inputs: Inputs,
             trim: Callable[[Inputs], dict]) -> dict[str, tf.Tensor]:
        """`function` (encoder inputs -> per-row outputs) on `inputs` (`[batch, sequence_length]`, with a
        `padding_mask`): XLA-compiled at a bucketed shape for a small batch, else on `trim(inputs)`."""
        compiled = tf.function(function, jit_compile=True, autograph=False)
        rows = tf.shape(inputs["padding_mask"])[0]
        return tf.cond(rows <= self.max_batch, lambda: self._bucketed(compiled, inputs, rows),
                       lambda: function(trim(inputs)))

    def _bucketed(self, compiled: Callable[[Inputs], dict], inputs: Inputs, rows: tf.Tensor) -> dict[str, tf.Tensor]:
        sequence_length = inputs["padding_mask"].shape[1]
        longest = tf.reduce_max(tf.reduce_sum(tf.cast(inputs["padding_mask"], tf.int32), axis=1))
        length = _next_bucket(longest, self.lengths(sequence_length))
        # Padding rows repeat row 0 (a real text), so no row is all padding; they are dropped below.
        order = tf.concat([tf.range(rows), tf.zeros([_next_bucket(rows, self.row_buckets()) - rows], tf.int32)], 0)
        outputs = compiled({name: tf.gather(value[:, :length], order) for name, value in inputs.items()})
        return {name: value[:rows] for name, value in outputs.items()}
