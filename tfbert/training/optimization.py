"""Optimizers of the published BERT-family pretraining and fine-tuning recipes.

Everything is Keras' own: `keras.optimizers.AdamW` / `keras.optimizers.Lamb`
for the update, their `weight_decay` + `exclude_from_weight_decay` for
decoupled decay, `global_clipnorm` for clipping and
`gradient_accumulation_steps` for accumulation. Only the schedule
(`WarmupLinearDecay`) is ours, because Keras has no warm-up + linear-decay
schedule.

Facts about Keras 3.15 these choices rely on (each is checked in
tests/training):

* `exclude_from_weight_decay(var_names=...)` joins the names into one regular
  expression and `re.search`es it in the name of the variable it is handed.
  On the TensorFlow backend that is the `tf.Variable` behind the Keras
  variable (`keras/src/backend/tensorflow/optimizer.py`,
  `_apply_weight_decay`), named after the variable *path* plus `:0`
  (`"encoder/layer_norm/gamma:0"`, and `".../gamma/replica_1:0"` for the other
  replicas of a `MirroredStrategy`), not Keras' short `variable.name`
  (`"gamma"`). `NO_DECAY_PATTERN` matches the last path component in all
  these spellings, so every `LayerNormalization` (`gamma`, `beta`) and every
  bias, the heads' `output_bias` included (as google-research/bert, which skips
  any name containing "bias"), is skipped while kernels and embeddings decay.
* Decay is decoupled and scaled by the learning rate:
  `w <- w - lr * weight_decay * w` before the Adam/LAMB step.
* With `gradient_accumulation_steps=k` the optimizer updates the weights every
  k-th `apply` with the mean of the k gradients, then clips and decays;
  `optimizer.iterations` counts updates but the learning-rate schedule is
  called with the raw micro-step counter (`optimizer._iterations`), so the
  schedule built here divides that counter by k.
* Keras 3.15's Adam/AdamW/Lamb update the second moment of an
  `IndexedSlices` gradient (embedding lookups) slice by slice, so a token
  seen twice in a batch gets `v += (1 - beta_2) * (g1**2 + g2**2)` instead
  of `(g1 + g2)**2` (checked in tests/training). BERT's optimizer saw the
  dense gradient; `DenseGradients` converts such gradients to dense tensors
  before the update, which also makes accumulation (dense by construction)
  equal to one big batch.
* `keras.optimizers.Lamb` applies decay outside the trust ratio and has no
  exclusion list for the layer adaptation, unlike ALBERT's
  `lamb_optimizer.py` (decay inside the update, LayerNorm/bias excluded
  from adaptation). Close enough to train with, not bit-for-bit ALBERT.

`steps_per_execution` on TPUs: run many steps per host round trip (e.g. 100
to 1000; use a divisor of `checkpoint_every`); the driver passes it to
`compile`.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from tfbert.training.recipes import RECIPES
from tfbert.training.schedules import WarmupLinearDecay

NO_DECAY_PATTERN = r"(^|/)(gamma|beta|\w*bias)(/replica_\d+)?(:\d+)?$"


class DenseGradients:
    """Mixin: densify `tf.IndexedSlices` gradients before the Keras update (see module notes)."""

    def apply(self, grads, trainable_variables=None):
        grads = [
            tf.convert_to_tensor(grad) if isinstance(grad, tf.IndexedSlices) else grad
            for grad in grads
        ]
        return super().apply(grads, trainable_variables)


@keras.saving.register_keras_serializable(package="tfbert")
class AdamWDense(DenseGradients, keras.optimizers.AdamW):
    """`keras.optimizers.AdamW` on dense gradients."""


@keras.saving.register_keras_serializable(package="tfbert")
class LambDense(DenseGradients, keras.optimizers.Lamb):
    """`keras.optimizers.Lamb` on dense gradients."""


def create_optimizer(
    recipe: str,
    total_steps: int,
    *,
    learning_rate: float | None = None,
    warmup_steps: int | None = None,
    weight_decay: float | None = None,
    epsilon: float | None = None,
    clipnorm: float | None = 1.0,
    gradient_accumulation_steps: int | None = None,
) -> keras.optimizers.Optimizer:
    """An optimizer following `recipe`, with warm-up + linear decay to 0 over `total_steps`.

    Args:
        recipe: one of `tfbert.training.recipes.RECIPES` (`"bert"`, `"roberta"`,
            `"albert"`, `"electra"`, `"electra-base"`, `"finetune"`).
        total_steps: number of optimizer updates of the whole run.
        learning_rate, warmup_steps, weight_decay, epsilon: override the recipe
            (epsilon is Adam's denominator term: 1e-6 in BERT's recipes, 1e-8 in PyTorch's AdamW).
            A `warmup_steps` larger than `total_steps` is cut to `total_steps`.
        clipnorm: clip the gradients by their *global* norm (Keras'
            `global_clipnorm`, as BERT does); `None` or 0 disables clipping.
        gradient_accumulation_steps: average this many micro-batches per
            update (Keras' own accumulation); `None` or 1 for none.

    Example:
        >>> optimizer = create_optimizer("bert", total_steps=1_000_000)
        >>> isinstance(optimizer, keras.optimizers.AdamW), float(optimizer.learning_rate)
        (True, 0.0)
    """
    if recipe not in RECIPES:
        raise ValueError(f"Unknown optimizer recipe {recipe!r}; expected one of {sorted(RECIPES)}.")
    settings = RECIPES[recipe]
    if warmup_steps is None:
        warmup_steps = (
            int(settings.warmup_fraction * total_steps)
            if settings.warmup_fraction is not None
            else settings.warmup_steps
        )
    accumulation = gradient_accumulation_steps or 1
    schedule = WarmupLinearDecay(
        learning_rate if learning_rate is not None else settings.learning_rate,
        warmup_steps=min(warmup_steps, total_steps),
        total_steps=total_steps,
        micro_steps_per_update=accumulation,
    )
    optimizer_class = {"adamw": AdamWDense, "lamb": LambDense}[
        settings.algorithm
    ]
    optimizer = optimizer_class(
        learning_rate=schedule,
        weight_decay=weight_decay if weight_decay is not None else settings.weight_decay,
        beta_1=settings.beta_1,
        beta_2=settings.beta_2,
        epsilon=epsilon if epsilon is not None else settings.epsilon,
        global_clipnorm=clipnorm or None,
        gradient_accumulation_steps=accumulation if accumulation > 1 else None,
    )
    optimizer.exclude_from_weight_decay(var_names=[NO_DECAY_PATTERN])
    return optimizer
