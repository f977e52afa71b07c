"""`Encoder.encode_at_positions`: the last layer at a few positions equals the full encoder gathered there."""

import numpy as np
import pytest
from family_models import batch_for, tiny_model
from model_fixtures import pretraining_batch, tiny_config

from tfbert.models.encoder import build_encoder
from tfbert.models.positions import gather_positions
from tfbert.models.pretraining import PretrainingModel


@pytest.mark.parametrize(
    "architecture, changes",
    [
        ("bert", {}),
        ("albert", {}),
        ("albert", {"num_layers": 4, "num_hidden_groups": 2, "inner_group_num": 2}),
        ("roberta", {"sharing": "ffn"}),
    ],
)
def test_matches_the_full_encoder_gathered(architecture, changes):
    config = tiny_config(architecture, **changes)
    encoder = build_encoder(config.encoder)
    inputs, _ = pretraining_batch(config, batch=4, length=16, predictions=5)
    positions = inputs.pop("masked_positions")
    full = encoder(inputs)
    selected = encoder.encode_at_positions(inputs, positions)
    np.testing.assert_allclose(selected["sequence_output"], gather_positions(full["sequence_output"], positions), atol=1e-5)
    np.testing.assert_allclose(selected["pooled_output"], full["pooled_output"], atol=1e-5)


def test_pretraining_logits_equal_the_heads_on_the_full_encoder():
    config = tiny_config("albert")
    model = PretrainingModel(config)
    inputs, _ = pretraining_batch(config)
    outputs = model(inputs)
    encoder_inputs = {name: inputs[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    full = model.encoder(encoder_inputs)
    mlm_logits = model.get_layer("mlm_head")(full["sequence_output"], inputs["masked_positions"])
    np.testing.assert_allclose(outputs["mlm_logits"], mlm_logits, atol=1e-5)
    np.testing.assert_allclose(outputs["sop_logits"], model.get_layer("sop_head")(full["pooled_output"]), atol=1e-5)


def test_causal_encoders_are_refused():
    config = tiny_config("bert")
    encoder = build_encoder(config.encoder, causal=True)
    inputs, _ = pretraining_batch(config)
    with pytest.raises(ValueError, match="bidirectional"):
        encoder.encode_at_positions(inputs, inputs["masked_positions"])


def test_spanbert_logits_equal_the_heads_on_the_full_encoder():
    model = tiny_model("spanbert")
    inputs, _ = batch_for(model.config)
    outputs = model(inputs)
    sequence = model.encoder({name: inputs[name] for name in ("token_ids", "segment_ids", "padding_mask")})
    sequence = sequence["sequence_output"]
    np.testing.assert_allclose(
        outputs["mlm_logits"], model.get_layer("mlm_head")(sequence, inputs["masked_positions"]), atol=1e-5
    )
    spans = (inputs[name] for name in ("span_left_positions", "span_right_positions", "span_offsets"))
    np.testing.assert_allclose(outputs["sbo_logits"], model.get_layer("sbo_head")(sequence, *spans), atol=1e-5)
