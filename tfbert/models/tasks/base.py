"""What every task model shares: the encoder it wraps, its config and its float32 loss helpers."""

from __future__ import annotations

import warnings
from typing import Any, Mapping

import keras
from keras import ops

from tfbert.config import EncoderConfig
from tfbert.models.encoder import Encoder
from tfbert.models.fitting import OptimizerBuiltBeforeFit
from tfbert.models.policies import policy_name as name_of_policy

EncoderLike = Encoder | EncoderConfig | Mapping[str, Any]

# A task that reads the tokens rather than the pooler (tagging, question answering, mean or first-token
# pooling) leaves the encoder's pooler without gradients, and Keras warns at every fit that "Gradients
# do not exist for variables ['pooler/kernel', 'pooler/bias'] ... did you forget to provide a `loss`".
# That is expected here and the hint misleads, so `TaskModel.fit` silences exactly that warning; any
# other variable without a gradient still warns.
UNUSED_POOLER_WARNING = r"Gradients do not exist for variables \['pooler/kernel', 'pooler/bias'\] when"


def as_encoder(encoder: EncoderLike, dtype: str | None = None) -> Encoder:
    """`encoder` itself (pretrained weights kept) or a fresh `Encoder` named "encoder" from a config."""
    if isinstance(encoder, Encoder):
        return encoder
    config = encoder if isinstance(encoder, EncoderConfig) else EncoderConfig.from_dict(encoder)
    return Encoder(config, dtype=dtype, name="encoder")


def policy_name(encoder: Encoder, dtype) -> str | None:
    """The dtype policy the head layers use: the one asked for, else the encoder's."""
    return name_of_policy(dtype if dtype is not None else encoder.dtype_policy)


def encoder_inputs(encoder: Encoder) -> dict[str, keras.KerasTensor]:
    """Fresh symbolic inputs with the encoder's names, shapes `[batch, length]`, int32."""
    return {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in encoder.input}


def masked_mean(values, weights):
    """Weighted mean in float32; 0 when every weight is 0."""
    weights = ops.cast(weights, "float32")
    return ops.sum(ops.cast(values, "float32") * weights) / ops.maximum(ops.sum(weights), 1e-12)


def label_tensor(y, key: str = "labels"):
    """Labels given either as a tensor or as `y[key]` of a dict."""
    return y[key] if isinstance(y, Mapping) else y


class TaskModel(OptimizerBuiltBeforeFit, keras.Model):
    """Base of the task models: a functional model around `self.encoder` plus task options.

    Subclasses build their graph, call `super().__init__(inputs=..., outputs=...)`
    and then `self._remember(encoder, options, dtype)`; `get_config` stores the
    encoder config, its family (`Encoder.architecture`) and the options, so
    `from_config` and `.keras` files rebuild the same model and say what it is.
    """

    def fit(self, *args, **kwargs):
        """`keras.Model.fit`, without Keras's warning about the pooler's gradients where the task skips it."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=UNUSED_POOLER_WARNING, category=UserWarning)
            return super().fit(*args, **kwargs)

    def _remember(self, encoder: Encoder, options: dict[str, Any], dtype: str | None) -> None:
        self.encoder = encoder
        self.options = dict(options)
        self._policy_name = dtype

    def get_config(self) -> dict[str, Any]:
        family = {"architecture": self.encoder.architecture} if self.encoder.architecture else {}
        return {
            "encoder": self.encoder.config.to_dict(),
            **family,
            **self.options,
            "name": self.name,
            "trainable": self.trainable,
            "dtype": self._policy_name,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]):
        config = dict(config)
        architecture = config.pop("architecture", None)
        model = cls(**config)
        model.encoder.architecture = model.encoder.architecture or architecture
        return model

    def _track(self, *names: str) -> None:
        self._trackers = {name: keras.metrics.Mean(name=name) for name in names}

    def _update_trackers(self, values: Mapping[str, Any], count):
        """Adds each batch mean with weight `count` (its examples or tokens): the result is the mean
        over everything seen, and an empty batch (Keras' last evaluation step on a dataset of unknown
        size) changes nothing."""
        count = ops.cast(count, "float32")
        for name, value in values.items():
            self._trackers[name].update_state(ops.where(count > 0, value, 0.0), count)
        return self.get_metrics_result()
