"""ELECTRA's two Hugging Face checkpoints, a discriminator and a generator, as one `ElectraPretrainingModel`.

`tfbert.convert.huggingface.load_huggingface` reads one checkpoint of any family; ELECTRA's
pretraining model is two (`ElectraForPreTraining`, `ElectraForMaskedLM`) that share the embeddings,
so the family reads both here.

Example:
    >>> from tfbert.families.electra.checkpoints import load_electra
    >>> model = load_electra("electra-small-discriminator/", "electra-small-generator/", seed=0)  # doctest: +SKIP
    >>> type(model).__name__  # doctest: +SKIP
    'ElectraPretrainingModel'
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from tfbert.config import ModelConfig
from tfbert.convert.huggingface import copy_weights, read_checkpoint, read_folder_config, unused_names
from tfbert.families.electra import formats as electra
from tfbert.families.electra.models import ElectraPretrainingModel
from tfbert.families.electra.spec import SPEC as ELECTRA


def load_electra(
    discriminator: str | Path,
    generator: str | Path,
    seed: int | None = None,
    rtd_weight: float = 50.0,
    dtype: str | None = None,
) -> ElectraPretrainingModel:
    """One `ElectraPretrainingModel` from a discriminator (`ElectraForPreTraining`) and a
    generator (`ElectraForMaskedLM`) checkpoint folder.

    tfbert's generator shares the discriminator's embeddings, so the
    discriminator's are loaded; if the generator checkpoint's embeddings
    differ (they are equal in checkpoints trained with tied embeddings, such
    as Google's), a warning says so.

    Example:
        >>> model = load_electra("electra-small-discriminator/", "electra-small-generator/", seed=0)   # not in the test assets  # doctest: +SKIP
    """
    folders = {"discriminator": Path(discriminator), "generator": Path(generator)}
    configs = {}
    for role, folder in folders.items():
        configs[role] = read_folder_config(folder)
        if configs[role].architecture != ELECTRA.name:
            raise ValueError(f"{role} checkpoint {str(folder)!r} is {configs[role].architecture!r}, not ELECTRA")
    config = ModelConfig(
        architecture=ELECTRA.name,
        encoder=configs["discriminator"].encoder,
        generator=configs["generator"].encoder,
        description=f"converted from Hugging Face ELECTRA {folders['discriminator'].name} + {folders['generator'].name}",
    )
    model = ElectraPretrainingModel(config, rtd_weight=rtd_weight, seed=seed, dtype=dtype)
    unused = {"discriminator": _load_discriminator(model, folders["discriminator"]),
              "generator": _load_generator(model, folders["generator"])}
    for role, names in unused.items():
        if names:
            warnings.warn(f"{folders[role]}: {len(names)} checkpoint tensor(s) not used: {', '.join(names[:10])}", stacklevel=2)
    return model


def _load_discriminator(model: ElectraPretrainingModel, folder: Path) -> list[str]:
    """The discriminator's encoder (with the shared embeddings) and head; returns the unused names."""
    state, prefix = read_checkpoint(folder, ELECTRA.name)
    assignments = [*electra.HUGGINGFACE_NAMES(model.discriminator, prefix),
                   *electra.discriminator_head_weights(model)]
    return unused_names(state, copy_weights(assignments, state, prefix, folder), ELECTRA.name)


def _load_generator(model: ElectraPretrainingModel, folder: Path) -> list[str]:
    """The generator's layers and head; its embeddings are the discriminator's, compared with a warning."""
    state, prefix = read_checkpoint(folder, ELECTRA.name)
    assignments = [*electra.HUGGINGFACE_NAMES(model.generator, prefix, embeddings=False),
                   *electra.generator_head_weights(model)]
    used = copy_weights(assignments, state, prefix, folder)
    differing = []
    for variable, names, fn in electra.HUGGINGFACE_NAMES.embedding_weights(model.generator, prefix):
        if all(name in state for name in names):
            used.update(names)
            if not np.allclose(fn(*(state[name] for name in names)), variable.numpy(), atol=1e-6):
                differing.extend(names)
    if differing:
        warnings.warn(
            f"{folder}: the generator's embeddings differ from the discriminator's "
            f"({', '.join(differing)}); tfbert's ELECTRA shares one set and keeps the discriminator's",
            stacklevel=3,
        )
    return unused_names(state, used, ELECTRA.name)
