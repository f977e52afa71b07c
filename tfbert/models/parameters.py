"""Parameter counts of encoder configs, without building the model.

Building a 500M-parameter Keras model allocates and initialises every weight;
listing configs only needs the count, which follows from the config in closed
form. Tests check the formula against real Keras builds and Hugging Face.
"""

from __future__ import annotations

from tfbert.config import EncoderConfig


def count_encoder_parameters(config: EncoderConfig) -> int:
    """Number of weights `build_encoder(config)` creates: embeddings, sub-layers (after sharing), pooler.

    Example:
        >>> count_encoder_parameters(load_config("bert_base").encoder)
        109482240
    """
    H, E, I = config.hidden_size, config.embedding_size, config.intermediate_size
    rows = config.vocab_size + config.max_positions + config.type_vocab_size + config.num_languages
    embeddings = rows * E + 2 * E + (E * H + H if E != H else 0)
    attention = 4 * (H * H + H) + 2 * H
    feedforward = (H * I + I) + (I * H + H) + 2 * H
    shared_copies = config.num_hidden_groups * config.inner_group_num
    unshared_copies = config.num_layers * config.inner_group_num
    attention_copies = shared_copies if config.sharing in ("all", "attention") else unshared_copies
    feedforward_copies = shared_copies if config.sharing in ("all", "ffn") else unshared_copies
    pooler = H * H + H if config.pooler else 0
    return embeddings + attention_copies * attention + feedforward_copies * feedforward + pooler
