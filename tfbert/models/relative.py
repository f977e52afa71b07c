"""DeBERTa's relative positions (He et al. 2021, https://arxiv.org/abs/2006.03654) in `keras.ops`.

Disentangled attention adds two terms to the content-to-content scores: content-to-position
(the query against the key's relative position) and position-to-content (the key against the
query's). Distances beyond `position_buckets / 2` share logarithmically wider buckets up to
`max_relative_distance`, as DeBERTa-v2/v3 do. The relative table is LayerNormed once and used
by every layer (`norm_rel_ebd: layer_norm`). No library holds this in Keras 3 ops (keras-hub's
DeBERTa-v3 has no log buckets), so it is written here.
"""

from __future__ import annotations

import math

import keras
from keras import ops

from tfbert.models.initializers import truncated_normal


def relative_buckets(length, buckets: int, max_distance: int):
    """`[length, length]` int32: the bucket of `query - key` (the distance itself when `buckets` is 0).

    Distances within `buckets // 2` keep their value; longer ones are `mid + ceil(log(|d| / mid) /
    log((max_distance - 1) / mid) * (mid - 1))` with their sign, computed in float32 as DeBERTa does.

    Example:
        >>> ops.convert_to_numpy(relative_buckets(4, 0, 512))[0].tolist()
        [0, -1, -2, -3]
    """
    positions = ops.arange(length, dtype="int32")
    # expand_dims rather than [:, None]: TensorFlow Lite has no builtin for a strided slice that adds an axis
    distance = ops.expand_dims(positions, 1) - ops.expand_dims(positions, 0)
    if not buckets:
        return distance
    mid = buckets // 2
    sign = ops.cast(ops.sign(distance), "float32")
    near = ops.logical_and(distance < mid, distance > -mid)
    magnitude = ops.where(near, float(mid - 1), ops.cast(ops.abs(distance), "float32"))
    scale = ops.cast(math.log((max_distance - 1) / mid), "float32")
    logarithmic = ops.ceil(ops.log(magnitude / mid) / scale * (mid - 1)) + mid
    bucketed = ops.where(magnitude <= mid, ops.cast(distance, "float32"), logarithmic * sign)
    return ops.cast(bucketed, "int32")


def gather_relative(scores, index):
    """`scores` `[batch, heads, rows, 2 * span]` read at `index` `[batch or 1, rows, columns]` -> `[batch, heads, rows, columns]`."""
    shape = ops.shape(scores)
    index = ops.broadcast_to(ops.expand_dims(index, 1), (shape[0], shape[1], ops.shape(index)[1], ops.shape(index)[2]))
    return ops.take_along_axis(scores, index, axis=-1)


def disentangled_scores(query, key, position_query, position_key, index):
    """Content-to-position plus position-to-content scores `[batch, heads, queries, keys]`.

    `query` `[batch, queries, heads, size]` and `position_query` `[2 * span, heads, size]` come
    already scaled; `index` `[batch or 1, queries, keys]` is `clip(bucket(query - key) + span)`.
    """
    content_to_position = ops.einsum("bqnd,rnd->bnqr", query, position_key)
    position_to_content = ops.einsum("bknd,rnd->bnkr", key, position_query)
    by_key = ops.transpose(index, (0, 2, 1))
    return gather_relative(content_to_position, index) + ops.transpose(
        gather_relative(position_to_content, by_key), (0, 1, 3, 2))


@keras.saving.register_keras_serializable(package="tfbert")
class RelativePositions(keras.layers.Layer):
    """The shared relative-position table `[2 * span, hidden]` (LayerNormed) and the bucket index.

    Called on the hidden states `[batch, length, hidden]`, returns `(table, index)`: the
    normalised table and `index` `[1, length, length]`, `clip(bucket(q - k) + span, 0, 2 * span - 1)`.

    Example:
        >>> table, index = RelativePositions(hidden_size=768, span=256, max_distance=512)(keras.random.normal((2, 16, 768)))
        >>> tuple(table.shape), tuple(index.shape)
        ((512, 768), (1, 16, 16))
    """

    def __init__(self, hidden_size: int, span: int, max_distance: int, buckets: int = 0,
                 layer_norm_epsilon: float = 1e-7, initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.span = span
        self.max_distance = max_distance
        self.buckets = buckets
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.embeddings = keras.layers.Embedding(2 * span, hidden_size, embeddings_initializer=truncated_normal(
            initializer_range), dtype=self.dtype_policy, name="relative_embedding")
        self.layer_norm = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=self.dtype_policy,
                                                          name="layer_norm")

    def build(self, inputs_shape):
        self.embeddings.build((None,))
        self.layer_norm.build((None, self.hidden_size))

    def call(self, inputs):
        table = self.layer_norm(ops.cast(self.embeddings.embeddings, self.compute_dtype))
        buckets = relative_buckets(ops.shape(inputs)[1], self.buckets, self.max_distance)
        index = ops.clip(buckets + self.span, 0, 2 * self.span - 1)
        return table, ops.expand_dims(index, 0)

    def compute_output_spec(self, inputs):
        return (keras.KerasTensor((2 * self.span, self.hidden_size), dtype=self.compute_dtype),
                keras.KerasTensor((1, inputs.shape[1], inputs.shape[1]), dtype="int32"))

    def get_config(self):
        config = super().get_config()
        config.update(hidden_size=self.hidden_size, span=self.span, max_distance=self.max_distance,
                      buckets=self.buckets, layer_norm_epsilon=self.layer_norm_epsilon,
                      initializer_range=self.initializer_range)
        return config
