"""Pretraining driver, optimizer recipes, learning-rate schedule and checkpoints.

The names below are imported when first used (TensorFlow with them), so `tfbert.training.recipes`
and the command line's option lists stay free of TensorFlow.
"""

from tfbert._lazy import by_module, lazy_exports

__all__ = ["RECIPES", "TrainingCheckpoint", "TrainingSettings", "WarmupLinearDecay", "create_optimizer", "train"]
__getattr__, __dir__ = lazy_exports(__name__, by_module({
    "tfbert.training.recipes": ["RECIPES"],
    "tfbert.training.checkpointing": ["TrainingCheckpoint"],
    "tfbert.training.schedules": ["WarmupLinearDecay"],
    "tfbert.training.optimization": ["create_optimizer"],
    "tfbert.training.driver": ["train"],
    "tfbert.training.settings": ["TrainingSettings"],
}))
