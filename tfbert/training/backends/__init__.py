"""The backend-specific part of training: which devices hold the model and how batches reach them.

`tfbert.training.driver.train` (and fine-tuning, distillation) is written once: the run folder, resume, progress
lines, the non-finite checks, checkpoints every N steps, the chunks of `fit`. What differs between the two backends
is a `TrainingDevices` object:

- `tensorflow_devices.TensorFlowDevices`: a `tf.distribute.Strategy` (TPU, mirrored GPUs, several workers, a CPU);
- `jax_devices.JaxDevices`: Keras' JAX trainer under a `keras.distribution` (data parallel over every device, or a
  `DATAxMODEL` mesh with the family's layout), one process per host.

Example:
    >>> devices = training_devices(TrainingSettings())   # the backend Keras runs on in this process
    >>> devices.name
    'tensorflow'
"""

from __future__ import annotations

import keras

from tfbert.architectures import ArchitectureSpec
from tfbert.training.backends.base import TrainingDevices
from tfbert.training.settings import TrainingSettings

__all__ = ["TrainingDevices", "training_backend", "training_devices"]


def training_backend(requested: str = "auto") -> str:
    """The backend a run in this process trains on: `requested`, checked against the one Keras was loaded with.

    `auto` is Keras' own backend (the command line sets `KERAS_BACKEND` from `--backend` before Keras loads;
    `tfbert.accelerators.resolve_backend` decides `auto` there).
    """
    loaded = keras.backend.backend()
    backend = loaded if requested == "auto" else requested
    if backend not in ("tensorflow", "jax"):
        raise ValueError(f"Keras runs on {loaded!r} here; tfbert trains on tensorflow or jax: set KERAS_BACKEND=jax "
                         "or KERAS_BACKEND=tensorflow before Keras is imported")
    if backend != loaded:
        raise ValueError(f"backend={backend!r} needs Keras on {backend}, but this process loaded Keras on {loaded}: "
                         f"set KERAS_BACKEND={backend} before Keras is imported (`tfbert ... --backend {backend}` "
                         "does it for you)")
    return backend


def training_devices(settings: TrainingSettings, family: ArchitectureSpec | None = None) -> TrainingDevices:
    """The `TrainingDevices` of `settings.backend` (`strategy` on TensorFlow; `mesh` and the `family`'s layout
    on JAX)."""
    if training_backend(settings.backend) == "jax":
        # Deferred (start-up): imports JAX, which TensorFlow runs lack
        from tfbert.training.backends.jax_devices import JaxDevices

        return JaxDevices.from_settings(settings, family)
    # Deferred (start-up): imports TensorFlow's distribution strategies, which JAX runs do not load
    from tfbert.training.backends.tensorflow_devices import TensorFlowDevices

    return TensorFlowDevices.from_settings(settings)
