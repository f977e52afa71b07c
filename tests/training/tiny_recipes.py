"""Tiny configs of the ELECTRA, SpanBERT, XLM and XLM-R recipes for CPU tests and benchmarks.

A base config's `embedding_size` is set (to its 768) when it loads, so each shrunk config names its
embedding width; otherwise the tiny encoder would keep 768-wide embeddings and a projection.
"""

from tfbert.config import load_config, scaled_generator


def tiny_electra(hidden=64, layers=2, heads=2, embedding=64, generator_fraction=0.25):
    config = load_config("electra_small")
    encoder = config.encoder.replace(hidden_size=hidden, num_layers=layers, num_heads=heads,
                                     intermediate_size=4 * hidden, embedding_size=embedding, max_positions=128)
    return config.replace(encoder=encoder, generator=scaled_generator(encoder, generator_fraction))


def tiny_spanbert(hidden=64, layers=2, heads=2):
    config = load_config("spanbert_base")
    return config.replace(encoder=config.encoder.replace(hidden_size=hidden, num_layers=layers, num_heads=heads,
                                                         intermediate_size=4 * hidden, embedding_size=hidden,
                                                         max_positions=128))


def tiny_xlm(hidden=64, layers=2, heads=2, num_languages=2):
    config = load_config("xlm_tiny")
    return config.replace(encoder=config.encoder.replace(hidden_size=hidden, num_layers=layers, num_heads=heads,
                                                         intermediate_size=4 * hidden, embedding_size=hidden,
                                                         max_positions=128, num_languages=num_languages))


def tiny_xlmr(hidden=64, layers=2, heads=2):
    config = load_config("xlmr_base")
    return config.replace(encoder=config.encoder.replace(hidden_size=hidden, num_layers=layers, num_heads=heads,
                                                         intermediate_size=4 * hidden, embedding_size=hidden,
                                                         max_positions=130))
