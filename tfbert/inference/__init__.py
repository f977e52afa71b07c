"""Trained models as functions of raw texts: `load_text_embedder(source).embed(texts)` and
`load_cross_encoder(source).score(texts, pairs)`, from a model dir, a `.keras` file, an encoder
folder or an exported SavedModel (`tfbert.export.client`).

Example:
    >>> from tfbert.inference.text_models import load_text_embedder
    >>> load_text_embedder.__name__
    'load_text_embedder'
"""
