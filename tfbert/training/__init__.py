"""Pretraining driver, optimizer recipes, learning-rate schedule and checkpoints.

The names below are imported when first used (TensorFlow with them), so `tfbert.training.recipes`
and the command line's option lists stay free of TensorFlow.
"""

from tfbert._lazy import lazy_exports

__all__ = ["RECIPES", "TrainingCheckpoint", "WarmupLinearDecay", "create_optimizer", "train"]
__getattr__, __dir__ = lazy_exports(__name__, {
    "RECIPES": "tfbert.training.recipes",
    "TrainingCheckpoint": "tfbert.training.checkpointing",
    "WarmupLinearDecay": "tfbert.training.schedules",
    "create_optimizer": "tfbert.training.optimization",
    "train": "tfbert.training.driver",
})
