"""Loading a `tfbert pretrain` run's pretraining model from its newest checkpoint (heads included).

Example:
    >>> model = load_pretraining_run("runs/bert", "bert")
    >>> sorted(model.output)
    ['mlm_logits', 'nsp_logits']
"""

from __future__ import annotations

from pathlib import Path

import keras

from tfbert import architectures
from tfbert.artifacts.checkpoints import newest_checkpoint, restore_model_weights
from tfbert.artifacts.layout import RUN_CONFIG_FILE
from tfbert.config import load_config


def newest_checkpoint_step(directory: str | Path) -> int | None:
    """The step of the newest complete checkpoint in a run folder (`ckpt-STEP`, either format: the run numbers
    checkpoints by their global step), None where it has none."""
    checkpoint = newest_checkpoint(directory)
    return None if checkpoint is None else checkpoint.step


def load_pretraining_run(directory: str | Path, family: str | None = None) -> keras.Model:
    """The pretraining model of the run in `directory` (the objectives its `config.yaml` records), restored
    from its newest checkpoint (either format, `tfbert.artifacts.checkpoints`); `FileNotFoundError` where it has
    none yet."""
    directory = Path(directory)
    checkpoint = newest_checkpoint(directory)
    if checkpoint is None:
        raise FileNotFoundError(f"{directory}: a pretraining run folder with no checkpoint (ckpt-*) to restore the "
                                "heads from; train at least one checkpoint interval first")
    config = load_config(str(directory / RUN_CONFIG_FILE))
    spec = architectures.get(family or config.architecture)
    named = config.pretraining.objectives if config.pretraining else None
    model = spec.build_pretraining_model(config, spec.objectives_named(named) if named else None)
    restore_model_weights(model, checkpoint)
    return model
