"""tfbert: BERT-family text encoders for TensorFlow and Keras 3."""

__version__ = "0.1.0"
