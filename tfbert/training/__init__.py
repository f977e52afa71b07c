"""Pretraining driver, optimizer recipes, learning-rate schedule and checkpoints."""

from tfbert.training.checkpointing import TrainingCheckpoint
from tfbert.training.driver import train
from tfbert.training.optimization import RECIPES, create_optimizer
from tfbert.training.schedules import WarmupLinearDecay

__all__ = ["RECIPES", "TrainingCheckpoint", "WarmupLinearDecay", "create_optimizer", "train"]
