"""`TrainingSettings`: the three training commands build it from their flags, and the training functions'
keyword arguments override it."""

import pytest

from tfbert.cli import build_parser
from tfbert.training.settings import TrainingSettings, training_settings


def test_pretrain_flags_become_the_settings():
    args = build_parser().parse_args(["pretrain", "--data", "c.txt", "--model-dir", "run", "--steps", "40",
                                      "--batch-size", "16", "--learning-rate", "3e-4", "--warmup-steps", "4",
                                      "--checkpoint-every", "20", "--seed", "7", "--precision", "fp32",
                                      "--jit-compile", "off"])
    settings = TrainingSettings.from_flags(args)
    assert (settings.steps, settings.batch_size, settings.learning_rate, settings.warmup_steps) == (40, 16, 3e-4, 4)
    assert (settings.checkpoint_every, settings.seed, settings.precision) == (20, 7, "fp32")
    assert settings.jit_compile is False


@pytest.mark.parametrize("command", [
    ["finetune", "--pretrained", "m", "--model-dir", "run", "--glue", "sst2"],
    ["distill", "--teacher", "t", "--student", "s", "--parallel", "p.tsv", "--model-dir", "run"],
])
def test_finetune_and_distill_flags_become_the_settings(command):
    args = build_parser().parse_args([*command, "--epochs", "2", "--batch-size", "8", "--learning-rate", "5e-5",
                                      "--seed", "3", "--strategy", "cpu", "--jit-compile", "on"])
    settings = TrainingSettings.from_flags(args)
    assert (settings.epochs, settings.batch_size, settings.learning_rate, settings.seed) == (2, 8, 5e-5, 3)
    assert settings.strategy == "cpu" and settings.steps is None and settings.jit_compile is True
    assert TrainingSettings.from_flags(build_parser().parse_args(command)).jit_compile is None


@pytest.mark.parametrize("value, setting", [("auto", "auto"), ("on", True), ("off", False)])
def test_jit_compile_flag_values(value, setting):
    args = build_parser().parse_args(["pretrain", "--data", "c.txt", "--model-dir", "run", "--steps", "4",
                                      "--jit-compile", value])
    jit_compile = TrainingSettings.from_flags(args).jit_compile
    assert jit_compile == setting and type(jit_compile) is type(setting)


def test_jit_compile_refuses_what_is_not_auto_on_or_off(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["finetune", "--pretrained", "m", "--model-dir", "run", "--glue", "sst2",
                                   "--jit-compile", "yes"])
    assert "argument --jit-compile: 'yes' is not one of auto, on, off" in capsys.readouterr().err
    with pytest.raises(ValueError, match="jit_compile='off': give True, False or 'auto'"):
        TrainingSettings(jit_compile="off")


def test_keyword_arguments_override_the_settings_and_the_old_batch_name_still_works():
    settings = training_settings(TrainingSettings(steps=10, batch_size=4, seed=1), {"global_batch_size": 8, "seed": 2})
    assert (settings.steps, settings.batch_size, settings.seed) == (10, 8, 2)
    with pytest.raises(TypeError, match="unknown training setting 'batch'; the settings are steps, epochs"):
        training_settings(None, {"batch": 8})
