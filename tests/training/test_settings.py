"""`TrainingSettings`: the three training commands build it from their flags, and the training functions'
keyword arguments override it."""

import pytest

from tfbert.cli import build_parser
from tfbert.training.settings import TrainingSettings, training_settings


def test_pretrain_flags_become_the_settings():
    args = build_parser().parse_args(["pretrain", "--data", "c.txt", "--model-dir", "run", "--steps", "40",
                                      "--batch-size", "16", "--learning-rate", "3e-4", "--warmup-steps", "4",
                                      "--checkpoint-every", "20", "--seed", "7", "--precision", "fp32"])
    settings = TrainingSettings.from_flags(args)
    assert (settings.steps, settings.batch_size, settings.learning_rate, settings.warmup_steps) == (40, 16, 3e-4, 4)
    assert (settings.checkpoint_every, settings.seed, settings.precision) == (20, 7, "fp32")


@pytest.mark.parametrize("command", [
    ["finetune", "--pretrained", "m", "--model-dir", "run", "--glue", "sst2"],
    ["distill", "--teacher", "t", "--student", "s", "--parallel", "p.tsv", "--model-dir", "run"],
])
def test_finetune_and_distill_flags_become_the_settings(command):
    args = build_parser().parse_args([*command, "--epochs", "2", "--batch-size", "8", "--learning-rate", "5e-5",
                                      "--seed", "3", "--strategy", "cpu"])
    settings = TrainingSettings.from_flags(args)
    assert (settings.epochs, settings.batch_size, settings.learning_rate, settings.seed) == (2, 8, 5e-5, 3)
    assert settings.strategy == "cpu" and settings.steps is None


def test_keyword_arguments_override_the_settings_and_the_old_batch_name_still_works():
    settings = training_settings(TrainingSettings(steps=10, batch_size=4, seed=1), {"global_batch_size": 8, "seed": 2})
    assert (settings.steps, settings.batch_size, settings.seed) == (10, 8, 2)
    with pytest.raises(TypeError, match="unknown training setting 'batch'; the settings are steps, epochs"):
        training_settings(None, {"batch": 8})
