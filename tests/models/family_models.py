"""Tiny ELECTRA, SpanBERT, XLM and XLM-R configs, their models and synthetic batches for the tests."""

import numpy as np

from tfbert.config import EncoderConfig, ModelConfig, scaled_generator
from tfbert.families.electra.models import ElectraPretrainingModel
from tfbert.families.spanbert.models import SpanBertPretrainingModel
from tfbert.families.xlm.models import XLMPretrainingModel
from tfbert.families.xlmr.models import XLMRobertaPretrainingModel

ARCHITECTURES = ("electra", "spanbert", "xlm", "xlmr")
SMALL = dict(vocab_size=120, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=48, max_positions=64)


def tiny_config(architecture: str) -> ModelConfig:
    if architecture == "electra":
        encoder = EncoderConfig(**SMALL, embedding_size=16, pooler=False)
        return ModelConfig("electra", encoder, generator=scaled_generator(encoder, 0.5))
    if architecture == "xlm":
        return ModelConfig("xlm", EncoderConfig(**SMALL, type_vocab_size=0, num_languages=3, pad_id=2, pooler=False,
                                                position_ids_input=True))
    if architecture == "xlmr":
        return ModelConfig("xlmr", EncoderConfig(**SMALL, type_vocab_size=1, pad_id=1, position_offset=2,
                                                 layer_norm_epsilon=1e-5))
    return ModelConfig(architecture, EncoderConfig(**SMALL))


def tiny_model(architecture: str, **kwargs):
    config = tiny_config(architecture)
    model_class = {"electra": ElectraPretrainingModel, "spanbert": SpanBertPretrainingModel,
                   "xlm": XLMPretrainingModel, "xlmr": XLMRobertaPretrainingModel}[architecture]
    return model_class(config, **kwargs)


def batch_for(config: ModelConfig, batch: int = 4, length: int = 16, predictions: int = 3, seed: int = 0):
    """(inputs, labels) with right padding, one segment, unused slots (position 0, weight 0) and masked spans."""
    rng = np.random.default_rng(seed)
    encoder = config.encoder
    lengths = rng.integers(predictions + 4, length + 1, size=batch)
    mask = (np.arange(length)[None, :] < lengths[:, None]).astype("int32")
    tokens = (rng.integers(5, encoder.vocab_size, size=(batch, length)) * mask).astype("int32")
    starts = np.array([rng.integers(1, n - predictions - 1) for n in lengths])
    positions = (starts[:, None] + np.arange(predictions)[None, :]).astype("int32")
    weights = np.ones((batch, predictions), "float32")
    weights[0, -1] = 0.0
    positions[0, -1] = 0
    rows = np.arange(batch)[:, None]
    masked_ids = (tokens[rows, positions] * weights).astype("int32")
    masked_tokens = tokens.copy()
    masked_tokens[rows, positions] = np.where(weights > 0, 4, tokens[rows, positions])
    inputs = {"token_ids": masked_tokens, "segment_ids": np.zeros_like(tokens), "padding_mask": mask,
              "masked_positions": positions}
    if encoder.num_languages:
        inputs["language_ids"] = np.ones_like(tokens)
    if encoder.position_ids_input:
        inputs["position_ids"] = np.broadcast_to(np.arange(length, dtype="int32"), tokens.shape).copy()
    if config.architecture == "spanbert":
        inputs["span_left_positions"] = (starts - 1)[:, None].repeat(predictions, 1).astype("int32")
        inputs["span_right_positions"] = (starts + predictions)[:, None].repeat(predictions, 1).astype("int32")
        inputs["span_offsets"] = (np.arange(predictions) + 1)[None, :].repeat(batch, 0).astype("int32")
    return inputs, {"masked_ids": masked_ids, "masked_weights": weights}
