"""Pretraining model classes accept the families they build, decided from the spec's properties (objectives,
masked-LM head, generator sharing), and refuse the others with one line saying what to build instead."""

import pytest

from tfbert import architectures
from tfbert.config import load_config
from tfbert.families.deberta.models import DebertaRTDModel
from tfbert.families.electra.models import ElectraPretrainingModel
from tfbert.families.spanbert.models import SpanBertPretrainingModel
from tfbert.families.xlm.models import XLMPretrainingModel
from tfbert.families.xlmr.models import XLMRobertaPretrainingModel
from tfbert.models.pretraining import PretrainingModel

# Each built-in family's default objectives, and the classes that build them.
BUILDS = {
    "bert": {PretrainingModel, XLMRobertaPretrainingModel},
    "albert": {PretrainingModel, XLMRobertaPretrainingModel},
    "roberta": {PretrainingModel, XLMRobertaPretrainingModel},
    "xlmr": {PretrainingModel, XLMRobertaPretrainingModel},
    "electra": {ElectraPretrainingModel},
    "deberta": {DebertaRTDModel},
    "spanbert": {SpanBertPretrainingModel},
    "xlm": {XLMPretrainingModel},
}
CLASSES = (PretrainingModel, XLMRobertaPretrainingModel, ElectraPretrainingModel, DebertaRTDModel,
           SpanBertPretrainingModel, XLMPretrainingModel)


@pytest.mark.parametrize("family", sorted(BUILDS))
def test_each_class_accepts_exactly_the_families_it_builds(family):
    spec = architectures.get(family)
    accepted = set()
    for model_class in CLASSES:
        try:
            model_class.check_family(spec, spec.default_objectives)
            accepted.add(model_class)
        except ValueError as error:
            assert str(error).startswith(f"{model_class.__name__} does not build architecture {family!r}: ")
            assert str(error).endswith(f"tfbert.architectures.get({family!r}).build_pretraining_model(config)")
    assert accepted == BUILDS[family]


def test_deberta_builds_a_plain_masked_lm_for_mlm_alone():
    PretrainingModel.check_family(architectures.get("deberta"), ("mlm",))


@pytest.mark.parametrize("model_class, config, message", [
    (PretrainingModel, "xlm_tiny", "its masked-LM head is 'transform', xlm's is 'tied'"),
    (PretrainingModel, "electra_small", "it trains mlm | mlm+nsp | mlm+sop, not mlm+rtd"),
    (ElectraPretrainingModel, "bert_tiny", "it trains a generator with 'shared' embeddings, bert has no generator"),
    (ElectraPretrainingModel, "deberta_v3_xsmall", "deberta has 'disentangled' generator embeddings"),
    (XLMPretrainingModel, "bert_tiny", "its masked-LM head is 'tied', bert's is 'transform'"),
])
def test_building_another_familys_model_says_what_to_build(model_class, config, message):
    with pytest.raises(ValueError, match=f"^{model_class.__name__} does not build architecture") as error:
        model_class(load_config(config))
    assert message in str(error.value) and "build_pretraining_model(config)" in str(error.value)
