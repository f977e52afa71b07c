"""Keras text models (cross-encoders, embedders) pack text exactly as fine-tuning did."""

import numpy as np
import pytest

from tfbert.config import EncoderConfig
from tfbert.tasks.features import encode_texts
from tfbert.tasks.models import SequenceRegressor
from tfbert.tasks.text_models import KerasCrossEncoder

from task_fixtures import WhitespaceTokenizer

PAIRS = (["a man plays a guitar", "two dogs run"], ["a person plays music", "dogs are running on the grass"])


@pytest.mark.parametrize("position_offset, given, style", [(0, None, "bert"), (2, None, "roberta"),
                                                            (0, "roberta", "roberta")])
def test_cross_encoder_packs_pairs_in_its_architectures_style(position_offset, given, style):
    config = EncoderConfig(vocab_size=2000, hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32,
                           max_positions=64, position_offset=position_offset)
    model = SequenceRegressor(config)
    tokenizer = WhitespaceTokenizer()
    cross_encoder = KerasCrossEncoder(model, tokenizer, max_length=32, packing_style=given)
    assert cross_encoder.packing_style == style

    features = encode_texts(tokenizer, *PAIRS, max_length=32, packing_style=style)
    expected = np.asarray(model(features, training=False)["score"]).reshape(-1)
    np.testing.assert_allclose(cross_encoder.score(*PAIRS), expected, atol=1e-5)
