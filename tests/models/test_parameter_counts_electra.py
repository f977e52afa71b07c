"""ELECTRA's pretraining model: both Hugging Face models with one shared embedding."""

import pytest

from tfbert.config import load_config
from tfbert.families.electra.models import ElectraPretrainingModel

from test_parameter_counts import huggingface_count


def _electra_pretraining_parameters(config) -> tuple[int, int]:
    """(tfbert's ELECTRA pretraining model, HF discriminator + generator minus the generator's own embeddings)."""
    model = ElectraPretrainingModel(config)
    discriminator = huggingface_count(config, model_class="ElectraForPreTraining")
    generator = huggingface_count(config, config.generator, model_class="ElectraForMaskedLM")
    E, g = config.generator.embedding_size, config.generator
    shared = (g.vocab_size + g.max_positions + g.type_vocab_size) * E + 2 * E
    return model.count_params(), discriminator + generator - shared


def test_electra_small_pretraining_model_is_both_hugging_face_models_with_one_embedding():
    ours, theirs = _electra_pretraining_parameters(load_config("electra_small"))
    assert ours == theirs


@pytest.mark.slow
def test_electra_base_pretraining_model_is_both_hugging_face_models_with_one_embedding():
    ours, theirs = _electra_pretraining_parameters(load_config("electra_base"))
    assert ours == theirs
