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
        >>> from tfbert.config import load_config
        >>> count_encoder_parameters(load_config("bert_base").encoder)
        109482240
    """
    H, E, I = config.hidden_size, config.embedding_size, config.intermediate_size
    positions = config.max_positions if config.positions == "absolute" else 0
    rows = config.vocab_size + positions + config.type_vocab_size + config.num_languages
    embeddings = rows * E + 2 * E + (E * H + H if E != H else 0)
    relative = 2 * config.relative_span * H + 2 * H if config.positions == "relative" else 0
    separate_position_projections = config.positions == "relative" and not config.share_attention_key
    attention = (6 if separate_position_projections else 4) * (H * H + H) + 2 * H
    feedforward = (H * I + I) * (2 if config.feed_forward == "gated" else 1) + (I * H + H) + 2 * H
    shared_copies = config.num_hidden_groups * config.inner_group_num
    unshared_copies = config.num_layers * config.inner_group_num
    attention_copies = shared_copies if config.sharing in ("all", "attention") else unshared_copies
    feedforward_copies = shared_copies if config.sharing in ("all", "ffn") else unshared_copies
    pooler = H * H + H if config.pooler else 0
    final_norm = 2 * H if config.norm_first else 0
    return (embeddings + relative + attention_copies * attention + feedforward_copies * feedforward + pooler
            + final_norm)
