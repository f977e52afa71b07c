"""Split the global batch across replicas and feed each worker its own data.

The driver uses `strategy.distribute_datasets_from_function`: the dataset
function runs once per input pipeline (one per worker, or per TPU host) and
receives a `tf.distribute.InputContext`. Each pipeline yields *per-replica*
batches and shards its own input (`shard_for_input_pipeline`). Keras 3
`Model.fit` accepts the resulting `tf.distribute.DistributedDataset` as is
(it only calls `experimental_distribute_dataset` on plain `tf.data.Dataset`s),
and this path works the same on TPUs, GPUs and several machines, with no
`AutoShardPolicy` guesswork about files versus elements.
"""

from __future__ import annotations

from typing import Callable

import tensorflow as tf

DatasetFn = Callable[[int, tf.distribute.InputContext], tf.data.Dataset]


def per_replica_batch_size(global_batch_size: int, strategy: tf.distribute.Strategy) -> int:
    """Global batch size divided by the number of replicas.

    Raises:
        ValueError: if the global batch size is not a multiple of the number
            of replicas (every replica must see a batch of the same static size).

    Example:
        >>> import tensorflow as tf
        >>> per_replica_batch_size(32, tf.distribute.get_strategy())
        32
    """
    replicas = strategy.num_replicas_in_sync
    if global_batch_size <= 0 or global_batch_size % replicas:
        raise ValueError(
            f"Global batch size {global_batch_size} cannot be split evenly across "
            f"{replicas} replicas; use a positive multiple of {replicas}."
        )
    return global_batch_size // replicas


def shard_for_input_pipeline(
    dataset: tf.data.Dataset, input_context: tf.distribute.InputContext
) -> tf.data.Dataset:
    """Keep every n-th element for this input pipeline (before batching).

    Shard a dataset of *files* when there are enough of them; shard examples
    otherwise.

    Example:
        >>> import tensorflow as tf
        >>> context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1)
        >>> [int(i) for i in shard_for_input_pipeline(tf.data.Dataset.range(4), context).as_numpy_iterator()]
        [1, 3]
    """
    if input_context.num_input_pipelines == 1:
        return dataset
    return dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)


def distribute_dataset(
    strategy: tf.distribute.Strategy,
    dataset_fn: DatasetFn,
    global_batch_size: int,
    *,
    skip_steps: int = 0,
) -> tf.distribute.DistributedDataset:
    """Build the per-pipeline datasets of `dataset_fn` under `strategy`.

    `dataset_fn(batch_size, input_context)` must return a dataset of
    per-replica batches of exactly `batch_size` examples
    (`batch(batch_size, drop_remainder=True)`), sharded for its pipeline.
    `skip_steps` global steps are skipped, so that a resumed run continues
    with the batches it has not seen yet (when the dataset order is
    deterministic).

    Example:
        >>> import tensorflow as tf
        >>> def dataset_fn(batch_size, context):
        ...     return tf.data.Dataset.range(64).batch(batch_size, drop_remainder=True)
        >>> batches = distribute_dataset(tf.distribute.get_strategy(), dataset_fn, 8)
    """
    batch_size = per_replica_batch_size(global_batch_size, strategy)

    def pipeline(input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        dataset = dataset_fn(batch_size, input_context)
        replicas_per_pipeline = (
            input_context.num_replicas_in_sync // input_context.num_input_pipelines
        )
        if skip_steps:
            dataset = dataset.skip(skip_steps * replicas_per_pipeline)
        return dataset

    return strategy.distribute_datasets_from_function(pipeline)
