"""Learning-rate schedule used by every pretraining recipe: linear warm-up, then linear decay."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="tfbert")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Rise linearly from 0 to `peak_learning_rate` over `warmup_steps`, then fall linearly.

    The rate reaches `end_learning_rate` at `total_steps` and stays there.
    Keras offers `PolynomialDecay(power=1)` and `CosineDecay(warmup_target=...)`
    but no linear warm-up followed by linear decay (the BERT/RoBERTa/ALBERT
    schedule), hence this class. Steps are optimizer updates
    (`optimizer.iterations`).

    Example:
        >>> schedule = WarmupLinearDecay(1e-4, warmup_steps=10, total_steps=110)
        >>> round(float(schedule(5)), 8), round(float(schedule(10)), 8), float(schedule(110))
        (5e-05, 0.0001, 0.0)
    """

    def __init__(
        self,
        peak_learning_rate: float,
        warmup_steps: int,
        total_steps: int,
        end_learning_rate: float = 0.0,
        micro_steps_per_update: int = 1,
    ):
        if total_steps <= 0:
            raise ValueError(f"total_steps must be positive, got {total_steps}.")
        if not 0 <= warmup_steps <= total_steps:
            raise ValueError(
                f"warmup_steps must lie in [0, total_steps={total_steps}], got {warmup_steps}."
            )
        self.peak_learning_rate = float(peak_learning_rate)
        self.warmup_steps = int(warmup_steps)
        self.total_steps = int(total_steps)
        self.end_learning_rate = float(end_learning_rate)
        self.micro_steps_per_update = int(micro_steps_per_update)

    def __call__(self, step):
        step = ops.cast(ops.floor_divide(step, self.micro_steps_per_update), "float32")
        peak = ops.cast(self.peak_learning_rate, "float32")
        end = ops.cast(self.end_learning_rate, "float32")
        warmup = float(max(self.warmup_steps, 1))
        warming = peak * step / warmup
        decay_steps = float(max(self.total_steps - self.warmup_steps, 1))
        progress = ops.clip((step - self.warmup_steps) / decay_steps, 0.0, 1.0)
        decaying = peak + (end - peak) * progress
        return ops.where(step < self.warmup_steps, warming, decaying)

    def get_config(self) -> dict:
        return {
            "peak_learning_rate": self.peak_learning_rate,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "end_learning_rate": self.end_learning_rate,
            "micro_steps_per_update": self.micro_steps_per_update,
        }
