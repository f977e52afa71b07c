"""Parameter counts of the ELECTRA, SpanBERT, XLM, XLM-R and RoBERTa configs against Hugging Face and the papers.

Building the large Keras models takes minutes on 2 CPU cores, so every config
is checked through `encoder_parameters`, a closed formula that is itself
checked against real Keras builds of the small configs, which between them
have every term (factorized embeddings, languages, no segments, pooler or
none); the Hugging Face side is built on the meta device.
"""

from pathlib import Path

import pytest

from tfbert.config import EncoderConfig, load_config
from tfbert.convert.huggingface import huggingface_config
from tfbert.models.electra import ElectraPretrainingModel
from tfbert.models.encoder import build_encoder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

CONFIGS = Path(__file__).parents[2] / "configs"
NEW_CONFIGS = ["electra_small", "electra_base", "electra_large", "spanbert_base", "spanbert_large",
               "xlm_tiny", "xlm_mlm_enfr_1024", "xlm_mlm_xnli15_1024", "xlmr_base", "xlmr_large",
               "roberta_tiny", "roberta_base", "roberta_large"]
SMALL_CONFIGS = ["electra_small", "xlm_tiny", "roberta_tiny"]
# The papers' rounded sizes (ELECTRA: the discriminator; SpanBERT: BERT's).
PAPERS = {"electra_small": 14e6, "electra_base": 110e6, "electra_large": 335e6, "spanbert_base": 110e6,
          "spanbert_large": 340e6, "xlmr_base": 270e6, "xlmr_large": 550e6}
HF_CLASSES = {
    "bert": (transformers.BertConfig, transformers.BertModel),
    "roberta": (transformers.RobertaConfig, transformers.RobertaModel),
    "electra": (transformers.ElectraConfig, transformers.ElectraModel),
    "xlm-roberta": (transformers.XLMRobertaConfig, transformers.XLMRobertaModel),
    "xlm": (transformers.XLMConfig, transformers.XLMModel),
}


def config_named(name):
    return load_config(CONFIGS / f"{name}.yaml")


def encoder_parameters(config: EncoderConfig) -> int:
    """tfbert's encoder size by formula: embeddings (+ projection), layers, pooler."""
    H, E, I = config.hidden_size, config.embedding_size, config.intermediate_size
    rows = config.vocab_size + config.max_positions + config.type_vocab_size + config.num_languages
    embeddings = rows * E + 2 * E + (E * H + H if E != H else 0)
    layer = 4 * (H * H + H) + 2 * H + (H * I + I) + (I * H + H) + 2 * H
    pooler = H * H + H if config.pooler else 0
    return embeddings + config.num_layers * layer + pooler


def huggingface_parameters(config, encoder: EncoderConfig | None = None, model_class=None) -> int:
    hf = huggingface_config(config.replace(encoder=encoder or config.encoder))
    config_class, base_class = HF_CLASSES[hf.pop("model_type")]
    with torch.device("meta"):
        model = (model_class or base_class)(config_class(**hf))
    return sum(parameter.numel() for parameter in model.parameters())


@pytest.mark.parametrize("name", NEW_CONFIGS)
def test_config_counts_equal_transformers_and_the_papers(name):
    config = config_named(name)
    ours = encoder_parameters(config.encoder)
    assert ours == huggingface_parameters(config)
    if config.generator is not None:
        assert encoder_parameters(config.generator) == huggingface_parameters(config, config.generator)
    if name in PAPERS:
        assert ours == pytest.approx(PAPERS[name], rel=0.05)


@pytest.mark.parametrize("name", SMALL_CONFIGS)
def test_formula_is_the_keras_count(name):
    config = config_named(name)
    assert build_encoder(config.encoder).count_params() == encoder_parameters(config.encoder)


def _electra_pretraining_parameters(config) -> tuple[int, int]:
    """(tfbert's ELECTRA pretraining model, HF discriminator + generator minus the generator's own embeddings)."""
    model = ElectraPretrainingModel(config)
    discriminator = huggingface_parameters(config, model_class=transformers.ElectraForPreTraining)
    generator = huggingface_parameters(config, config.generator, model_class=transformers.ElectraForMaskedLM)
    E, g = config.generator.embedding_size, config.generator
    shared = (g.vocab_size + g.max_positions + g.type_vocab_size) * E + 2 * E
    return model.count_params(), discriminator + generator - shared


def test_electra_small_pretraining_model_is_both_hugging_face_models_with_one_embedding():
    ours, theirs = _electra_pretraining_parameters(config_named("electra_small"))
    assert ours == theirs


@pytest.mark.slow
def test_electra_base_pretraining_model_is_both_hugging_face_models_with_one_embedding():
    ours, theirs = _electra_pretraining_parameters(config_named("electra_base"))
    assert ours == theirs
