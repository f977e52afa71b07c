"""The conformance suite's tiny configs and batches, all read from the family's spec and model.

A family's tiny config is the spec's `encoder_defaults` under a small shared size, with a half-width
generator when the spec has one; batches are made from the model's own input names.
"""

import numpy as np

from tfbert import architectures
from tfbert.config import EncoderConfig, ModelConfig, scaled_generator

# intermediate_size = 4 * hidden_size, as Hugging Face XLM holds it.
SMALL = dict(hidden_size=32, num_layers=2, num_heads=4, intermediate_size=128, max_positions=64)
LENGTH = 12


def tiny_config(family: str, vocab_size: int) -> ModelConfig:
    """The family's smallest config: its `encoder_defaults` at `SMALL` size (and a half-width generator)."""
    spec = architectures.get(family)
    encoder = EncoderConfig(**spec.with_defaults(dict(SMALL, vocab_size=vocab_size)))
    generator = scaled_generator(encoder, 0.5) if spec.generator else None
    return ModelConfig(family, encoder, generator=generator, description=f"tiny {family} (conformance)")


def encoder_inputs(encoder_config: EncoderConfig, batch: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    """Right-padded random ids for every input an encoder of `encoder_config` takes."""
    rng = np.random.default_rng(seed)
    lengths = np.resize([LENGTH, LENGTH - 3, 7], batch)
    mask = (np.arange(LENGTH)[None, :] < lengths[:, None]).astype("int32")
    inputs = {"token_ids": (rng.integers(5, encoder_config.vocab_size, (batch, LENGTH)) * mask).astype("int32"),
              "padding_mask": mask,
              "segment_ids": ((np.arange(LENGTH)[None, :] >= lengths[:, None] // 2) * mask).astype("int32")}
    if encoder_config.type_vocab_size < 2:
        inputs["segment_ids"] = np.zeros_like(mask)
    if encoder_config.num_languages:
        inputs["language_ids"] = np.ones_like(mask)
    if encoder_config.position_ids_input:
        inputs["position_ids"] = np.broadcast_to(np.arange(LENGTH, dtype="int32"), mask.shape).copy()
    return inputs


def pretraining_batch(model, predictions: int = 3, batch: int = 3, seed: int = 0) -> tuple[dict, dict]:
    """(inputs, labels) for any pretraining model: its inputs by name, the labels its family's recipe names."""
    spec = model.config.spec
    inputs = encoder_inputs(model.config.encoder, batch, seed)
    batch = len(inputs["token_ids"])
    positions = np.tile(np.arange(1, predictions + 1, dtype="int32"), (batch, 1))
    extra = {"masked_positions": positions, "span_left_positions": positions - 1,
             "span_right_positions": positions + 1, "span_offsets": np.ones_like(positions)}
    names = [name for name in model.input if name not in inputs]
    missing = [name for name in names if name not in extra]
    assert not missing, f"the conformance suite has no batch for the inputs {missing}; teach pretraining_batch"
    inputs.update({name: extra[name] for name in names})
    rows = np.arange(batch)[:, None]
    labels = {"masked_ids": inputs["token_ids"][rows, positions], "masked_weights": np.ones(positions.shape, "float32")}
    if spec.examples.model_label and getattr(model, "pair_objective", None):
        labels[spec.examples.model_label] = np.arange(batch, dtype="int32") % 2
    return inputs, labels


def counting_traces(model) -> list:
    """A list that grows by one each time TensorFlow traces `model.train_step` (its Python body runs once a trace)."""
    traces = []
    train_step = model.train_step

    def counted(data):
        traces.append(1)
        return train_step(data)

    model.train_step = counted
    return traces
