"""Weight initialisation shared by every tfbert layer."""

import keras


def truncated_normal(stddev: float) -> keras.initializers.Initializer:
    """BERT's initialiser: a normal distribution truncated at two standard deviations."""
    return keras.initializers.TruncatedNormal(stddev=stddev)
