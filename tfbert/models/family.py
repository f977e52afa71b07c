"""Which families a pretraining model class builds, decided from the spec of the config it is given.

Each pretraining model class states what it builds: the objectives it trains, its masked-LM head
(`transform`: BERT's dense + LayerNorm before the tied decoder; `tied`: XLM's bare tied
projection) and, when it has a generator, how the generator shares its embeddings (`shared`:
ELECTRA; `disentangled`: DeBERTa-v3's gradient-disentangled sharing). A config of a family whose
spec says otherwise is refused with what to build instead; no class is looked up by name.

Example:
    >>> from tfbert import architectures
    >>> from tfbert.models.pretraining import PretrainingModel
    >>> PretrainingModel.check_family(architectures.get("xlm"), ("mlm",))
    Traceback (most recent call last):
    ValueError: PretrainingModel does not build architecture 'xlm': its masked-LM head is 'transform', xlm's is 'tied'; build xlm's pretraining model with tfbert.architectures.get('xlm').build_pretraining_model(config)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Iterable

from tfbert.models.fitting import OptimizerBuiltBeforeFit

if TYPE_CHECKING:
    from tfbert.architectures import ArchitectureSpec


class FamilyPretrainingModel(OptimizerBuiltBeforeFit):
    """Mixin of every pretraining model class: what it builds (`objective_sets`, `lm_head`,
    `generator_embeddings`) and `check_family`, which its constructor calls with the config's spec. Its
    `fit` builds the optimizer before Keras traces the train step (`tfbert.models.fitting`).

    Example:
        >>> from tfbert import architectures
        >>> from tfbert.models.pretraining import PretrainingModel
        >>> PretrainingModel.check_family(architectures.get("albert"))   # the family's default objectives
        ('mlm', 'sop')
    """

    # The objective sets the class trains; it builds a family that has every objective of one of them.
    objective_sets: ClassVar[tuple[tuple[str, ...], ...]] = ()
    lm_head: ClassVar[str] = "transform"
    # None: the class has no generator (and builds families with one only for objectives without it).
    generator_embeddings: ClassVar[str | None] = None

    @classmethod
    def check_family(cls, spec: ArchitectureSpec, objectives: Iterable[str] | None = None) -> tuple[str, ...]:
        """`objectives` (None: the family's defaults) as a tuple; `ValueError` unless this class builds `spec`'s
        family training them, and the family trains them (`ArchitectureSpec.check_objectives`)."""
        chosen = spec.chosen_objectives(objectives)
        problem = cls._mismatch(spec, chosen)
        if problem:
            raise ValueError(f"{cls.__name__} does not build architecture {spec.name!r}: {problem}; build "
                             f"{spec.name}'s pretraining model with tfbert.architectures.get({spec.name!r})"
                             ".build_pretraining_model(config)")
        return spec.check_objectives(chosen)

    @classmethod
    def _mismatch(cls, spec: ArchitectureSpec, objectives: tuple[str, ...]) -> str | None:
        if spec.lm_head != cls.lm_head:
            return f"its masked-LM head is {cls.lm_head!r}, {spec.name}'s is {spec.lm_head!r}"
        if cls.generator_embeddings is not None and (not spec.generator or
                                                     spec.generator_embeddings != cls.generator_embeddings):
            has = f"{spec.generator_embeddings!r} generator embeddings" if spec.generator else "no generator"
            return f"it trains a generator with {cls.generator_embeddings!r} embeddings, {spec.name} has {has}"
        if set(objectives) not in [set(chosen) for chosen in cls.objective_sets]:
            return (f"it trains {' | '.join('+'.join(chosen) for chosen in cls.objective_sets)}, not "
                    f"{'+'.join(objectives)} ({spec.name}'s objectives: {', '.join(spec.objectives)})")
        return None
