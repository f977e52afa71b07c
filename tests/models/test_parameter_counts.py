"""Parameter counts against Hugging Face, and what each sharing strategy implies."""

import pytest

from tfbert.config import EncoderConfig, available_configs, load_config
from tfbert.convert.huggingface import huggingface_config
from tfbert.models.encoder import build_encoder
from tfbert.models.parameters import count_encoder_parameters

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

# Figures stated in the foundation issue (Hugging Face BertModel / AlbertModel, pooler included).
STATED = {
    "bert_base": 109_482_240,
    "albert_base": 11_683_584,
    "albert_large": 17_683_968,
    "albert_xlarge": 58_724_864,
    "albert_xxlarge": 222_595_584,
}
# The papers' rounded sizes (ELECTRA: the discriminator; SpanBERT: BERT's).
PAPERS = {"bert_base": 110e6, "bert_large": 340e6, "albert_base": 12e6, "albert_large": 18e6, "albert_xlarge": 60e6,
          "electra_small": 14e6, "electra_base": 110e6, "electra_large": 335e6, "spanbert_base": 110e6,
          "spanbert_large": 340e6, "roberta_base": 125e6, "roberta_large": 355e6, "xlmr_base": 270e6,
          "xlmr_large": 550e6, "deberta_v3_xsmall": 70e6, "deberta_v3_small": 142e6, "deberta_v3_base": 184e6,
          "deberta_v3_large": 435e6}
HF_CLASSES = {
    "bert": ("BertConfig", "BertModel"),
    "albert": ("AlbertConfig", "AlbertModel"),
    "roberta": ("RobertaConfig", "RobertaModel"),
    "electra": ("ElectraConfig", "ElectraModel"),
    "xlm-roberta": ("XLMRobertaConfig", "XLMRobertaModel"),
    "xlm": ("XLMConfig", "XLMModel"),
    "deberta-v2": ("DebertaV2Config", "DebertaV2Model"),
}
# Real Keras builds stay under this size, so the suite stays fast; larger configs rely on the formula,
# which these builds check term by term.
BUILD_LIMIT = 60_000_000


def huggingface_count(config, encoder: EncoderConfig | None = None, model_class: str | None = None) -> int:
    """Parameters of the Hugging Face model for `config` (or its `encoder` override), built on the meta device."""
    hf = huggingface_config(config.replace(encoder=encoder or config.encoder))
    config_class, base_class = HF_CLASSES[hf.pop("model_type")]
    with torch.device("meta"):
        model = getattr(transformers, model_class or base_class)(getattr(transformers, config_class)(**hf))
    return sum(parameter.numel() for parameter in model.parameters())


@pytest.mark.parametrize("name", available_configs())
def test_shipped_config_counts_equal_transformers_and_the_papers(name):
    config = load_config(name)
    ours = count_encoder_parameters(config.encoder)
    assert ours == huggingface_count(config)
    if config.generator is not None:
        assert count_encoder_parameters(config.generator) == huggingface_count(config, config.generator)
    if name in STATED:
        assert ours == STATED[name]
    if name in PAPERS:
        assert ours == pytest.approx(PAPERS[name], rel=0.07)


@pytest.mark.parametrize(
    "name", [name for name in available_configs() if count_encoder_parameters(load_config(name).encoder) < BUILD_LIMIT])
def test_formula_is_the_keras_count(name):
    config = load_config(name)
    assert build_encoder(config.encoder).count_params() == count_encoder_parameters(config.encoder)


SMALL = dict(vocab_size=1000, hidden_size=64, num_layers=6, num_heads=4, intermediate_size=128, embedding_size=32,
             max_positions=128)


def component_counts(config: EncoderConfig):
    """Parameters of the embeddings (+projection, + pooler), one attention and one FFN sub-layer, by formula."""
    H, E, I = config.hidden_size, config.embedding_size, config.intermediate_size
    embeddings = (config.vocab_size + config.max_positions + config.type_vocab_size) * E + 2 * E
    projection = E * H + H if E != H else 0
    pooler = H * H + H
    attention = 3 * (H * H + H) + (H * H + H) + 2 * H
    ffn = (H * I + I) + (I * H + H) + 2 * H
    return embeddings + projection + pooler, attention, ffn


@pytest.mark.parametrize(
    "sharing,groups,inner,attention_copies,ffn_copies",
    [
        ("none", 1, 1, 6, 6),
        ("all", 1, 1, 1, 1),
        ("all", 3, 1, 3, 3),
        ("all", 2, 2, 4, 4),
        ("attention", 1, 1, 1, 6),
        ("attention", 2, 1, 2, 6),
        ("ffn", 1, 1, 6, 1),
        ("ffn", 3, 2, 12, 6),
    ],
)
def test_sharing_strategy_parameter_count(sharing, groups, inner, attention_copies, ffn_copies):
    config = EncoderConfig(**SMALL, sharing=sharing, num_hidden_groups=groups, inner_group_num=inner)
    base, attention, ffn = component_counts(config)
    encoder = build_encoder(config)
    assert encoder.count_params() == base + attention_copies * attention + ffn_copies * ffn
    assert encoder.count_params() == count_encoder_parameters(config)


@pytest.mark.parametrize("sharing", ["all", "attention", "ffn"])
def test_shared_layers_are_the_same_variables(sharing):
    config = EncoderConfig(**SMALL, sharing=sharing, num_hidden_groups=2)
    encoder = build_encoder(config)
    first_attention, first_ffn = encoder.block(0)
    same_group_attention, same_group_ffn = encoder.block(2)
    other_group_attention, other_group_ffn = encoder.block(3)
    attention_shared = sharing in ("all", "attention")
    ffn_shared = sharing in ("all", "ffn")
    assert (first_attention is same_group_attention) == attention_shared
    assert (first_ffn is same_group_ffn) == ffn_shared
    assert first_attention is not other_group_attention
    assert first_ffn is not other_group_ffn
    if attention_shared:
        assert first_attention.query_key_value.kernel is same_group_attention.query_key_value.kernel
    trainable_ids = [id(v) for v in encoder.trainable_variables]
    assert len(trainable_ids) == len(set(trainable_ids))


def test_language_embeddings_and_no_segment_embeddings():
    import numpy as np

    plain = EncoderConfig(**SMALL)
    with_languages = plain.replace(num_languages=3, type_vocab_size=0)
    encoder = build_encoder(with_languages)
    assert set(encoder.input) == {"token_ids", "segment_ids", "padding_mask", "language_ids"}
    E = plain.embedding_size
    assert encoder.count_params() == build_encoder(plain).count_params() + 3 * E - 2 * E
    ids = np.ones((2, 5), "int32")
    inputs = {"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": ids}
    english = encoder({**inputs, "language_ids": 0 * ids})["sequence_output"]
    spanish = encoder({**inputs, "language_ids": ids})["sequence_output"]
    assert not np.allclose(english, spanish)
