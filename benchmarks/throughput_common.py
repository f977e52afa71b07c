"""What the training-throughput benchmarks share (the batch, tfbert's train step, its matmul FLOPs, the
timing), kept importable under this name for the scripts here; the code is in `benchmarks.lab`.

Imports no TensorFlow, so `train_throughput_jax.py` runs where only JAX is installed.
"""

from benchmarks.lab.throughput import LENGTH, PREDICTIONS, make_batch, matmul_flops, tfbert_step  # noqa: F401
from benchmarks.lab.timing import seconds, time_steps  # noqa: F401
