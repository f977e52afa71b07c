"""The published optimizer recipes by name; plain data, so the command line lists them without TensorFlow.

An architecture names its paper's recipe (`tfbert.architectures`' `spec.optimizer`);
`tfbert.training.optimization.create_optimizer` builds the Keras optimizer of a recipe.

Example:
    >>> RECIPES["albert"].algorithm, RECIPES["albert"].learning_rate
    ('lamb', 0.00176)
    >>> pretraining_recipes()
    ('bert', 'roberta', 'albert', 'electra', 'electra-base')
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class OptimizerRecipe:
    """Hyper-parameters of one published recipe.

    `warmup_steps` is an absolute number of updates; `warmup_fraction`, when
    set, overrides it with a fraction of the total updates. `stage` says what
    the recipe is for: `pretraining` or `finetuning`.
    """

    algorithm: str
    learning_rate: float
    warmup_steps: int
    weight_decay: float = 0.01
    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-6
    warmup_fraction: float | None = None
    stage: str = "pretraining"


RECIPES = {
    # Devlin et al. 2019, google-research/bert optimization.py.
    "bert": OptimizerRecipe("adamw", 1e-4, 10_000),
    # Liu et al. 2019, Table 9 (base): peak 6e-4, 24k warm-up, beta2 0.98.
    "roberta": OptimizerRecipe("adamw", 6e-4, 24_000, beta_2=0.98),
    # Lan et al. 2020: LAMB, 0.00176, 3,125 warm-up steps.
    "albert": OptimizerRecipe("lamb", 0.00176, 3_125),
    # Clark et al. 2020, Table 6: 5e-4 for small, 2e-4 for base/large.
    "electra": OptimizerRecipe("adamw", 5e-4, 10_000),
    "electra-base": OptimizerRecipe("adamw", 2e-4, 10_000),
    # Fine-tuning on downstream tasks: 2e-5, 10% warm-up.
    "finetune": OptimizerRecipe("adamw", 2e-5, 0, warmup_fraction=0.1, stage="finetuning"),
}


def pretraining_recipes() -> tuple[str, ...]:
    """The names of the pretraining recipes (`tfbert pretrain --optimizer`)."""
    return tuple(name for name, recipe in RECIPES.items() if recipe.stage == "pretraining")
