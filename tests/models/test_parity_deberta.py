"""DeBERTa-v3 against Hugging Face `DebertaV2ForMaskedLM` (random weights, tiny shape) through the real loader."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tfbert.config import ModelConfig  # noqa: E402
from tfbert.convert.huggingface import config_from_huggingface, huggingface_config, load_huggingface  # noqa: E402

TOLERANCE = 1e-4
# DeBERTa-v3's layout at a tiny size; 8 buckets up to distance 16 so a 20-token batch reaches the log buckets.
TINY = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
            max_position_embeddings=64, relative_attention=True, pos_att_type="p2c|c2p", position_biased_input=False,
            position_buckets=8, max_relative_positions=16, norm_rel_ebd="layer_norm", type_vocab_size=0,
            layer_norm_eps=1e-7, hidden_act="gelu")


def _batch(length=20):
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 99, size=(3, length)).astype("int32")
    mask = (np.arange(length)[None, :] < np.array([[length], [14], [6]])).astype("int32")
    positions = np.array([[1, 5, length - 1], [2, 3, 13], [1, 2, 5]], "int32")
    return ids * mask, mask, positions


@pytest.mark.parametrize("share_att_key", [True, False], ids=["shared-key", "separate-position-projections"])
def test_masked_lm_matches_transformers(tmp_path, share_att_key):
    torch.manual_seed(0)
    reference = transformers.DebertaV2ForMaskedLM(transformers.DebertaV2Config(**TINY, share_att_key=share_att_key))
    reference.eval()
    reference.save_pretrained(tmp_path)

    model = load_huggingface(tmp_path, heads=True)
    ids, mask, positions = _batch()
    inputs = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": mask}
    ours = model({**inputs, "masked_positions": positions}, training=False)
    encoded = model.encoder(inputs, training=False)
    with torch.no_grad():
        theirs = reference(input_ids=torch.tensor(ids, dtype=torch.long),
                           attention_mask=torch.tensor(mask, dtype=torch.long), output_hidden_states=True)
    keep = mask.astype(bool)
    for layer, hidden in enumerate(encoded["encoder_outputs"]):
        np.testing.assert_allclose(np.asarray(hidden)[keep], theirs.hidden_states[layer + 1].numpy()[keep],
                                   atol=TOLERANCE, rtol=0)
    expected_logits = np.take_along_axis(theirs.logits.numpy(), positions[:, :, None], axis=1)
    np.testing.assert_allclose(np.asarray(ours["mlm_logits"]), expected_logits, atol=TOLERANCE, rtol=0)


def test_config_converts_both_ways():
    hf = {"model_type": "deberta-v2", **TINY, "share_att_key": True}
    config = config_from_huggingface(hf)
    assert config.architecture == "deberta"
    assert (config.encoder.positions, config.encoder.position_buckets, config.encoder.max_relative_positions) == (
        "relative", 8, 16)
    written = huggingface_config(config)
    assert config_from_huggingface(written) == ModelConfig("deberta", config.encoder, config.description)
    assert transformers.DebertaV2Config(**written).position_buckets == 8


@pytest.mark.parametrize("change,fragment", [({"position_biased_input": True}, "position_biased_input"),
                                             ({"pos_att_type": ["c2p"]}, "pos_att_type"),
                                             ({"conv_kernel_size": 3}, "conv_kernel_size")])
def test_unsupported_deberta_configs_say_which_field(change, fragment):
    with pytest.raises(ValueError, match=fragment):
        config_from_huggingface({"model_type": "deberta-v2", **TINY, **change})
