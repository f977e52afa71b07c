"""`fit` with the optimizer's variables made first, so Keras traces the train step once, not twice.

Keras' TensorFlow trainer builds the optimizer (Adam's moments, AdamW's, the accumulators of gradient
accumulation) inside the first trace of the train step, unless the model was made under a
`tf.distribute` strategy scope. TensorFlow then finds variables created while tracing: it lifts their
initializers out of the graph and traces the whole train step a second time without them. Built before
`fit`, the optimizer has its variables and the step is traced once: the first `fit` takes about half the
CPU time, a `bert_base` classifier's 10.9 CPU-seconds instead of 19.8 (`benchmarks/first_fit.py`). The JAX
and torch trainers build the optimizer before their first step anyway, so nothing changes there.
"""

from __future__ import annotations

import contextlib

import keras


def build_optimizer(model: keras.Model) -> None:
    """Make `model.optimizer`'s variables for `model.trainable_variables` where Keras would make them
    inside a traced train step: a compiled, built model whose optimizer is not built yet (anything else is
    left to Keras). Under the model's `tf.distribute` strategy, as Keras' own symbolic build does.

    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile(optimizer="adam", loss="mse")
    >>> build_optimizer(model)
    >>> model.optimizer.built, len(model.optimizer.variables)   # iterations, learning rate, 2 moments x 2 weights
    (True, 6)
    """
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or optimizer.built or not model.built:
        return
    strategy = getattr(model, "distribute_strategy", None)   # the TensorFlow trainer's; other backends have none
    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        optimizer.build(model.trainable_variables)


class OptimizerBuiltBeforeFit:
    """Mixin for a `keras.Model` subclass: `fit` and `train_on_batch` build the optimizer first
    (`build_optimizer`), so Keras traces the train step once.

    Example:
        >>> class Regressor(OptimizerBuiltBeforeFit, keras.Sequential):
        ...     pass
        >>> model = Regressor([keras.Input((2,)), keras.layers.Dense(1)])
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> history = model.fit(keras.ops.ones((4, 2)), keras.ops.zeros((4, 1)), verbose=0)
        >>> int(model.optimizer.iterations)
        1
    """

    def fit(self, *args, **kwargs):
        build_optimizer(self)
        return super().fit(*args, **kwargs)

    def train_on_batch(self, *args, **kwargs):
        build_optimizer(self)
        return super().train_on_batch(*args, **kwargs)
