"""Find the pretrained encoder to fine-tune: a `.keras` file, a pretraining output folder, or a Hugging Face folder."""

from __future__ import annotations

from pathlib import Path

import keras

from tfbert.models.encoder import Encoder


def load_pretrained_encoder(source: str | Path | Encoder, dtype: str | None = None) -> Encoder:
    """The `Encoder` of `source`, with its pretrained weights.

    `source` may be an `Encoder`; a `.keras` file holding an `Encoder` or any
    model with an `.encoder` (e.g. a saved `PretrainingModel` or task model);
    a folder with `encoder.keras`, or a pretraining run's `model_dir` (whose
    `encoder/encoder.keras` `tfbert pretrain` writes); or a Hugging Face
    checkpoint folder (`config.json` + weights, through `load_huggingface`).

    Example:
        >>> encoder = load_pretrained_encoder("runs/bert-base/encoder")
    """
    if isinstance(source, Encoder):
        return source
    path = Path(source)
    if path.is_dir():
        for candidate in (path / "encoder.keras", path / "encoder" / "encoder.keras"):
            if candidate.is_file():
                return load_pretrained_encoder(candidate)
        if (path / "config.json").is_file():
            from tfbert.convert.huggingface import load_huggingface

            return load_huggingface(path, dtype=dtype)
        raise FileNotFoundError(f"{path}: found neither encoder.keras (a tfbert encoder) nor config.json "
                                "(a Hugging Face checkpoint)")
    if path.suffix == ".keras" and path.is_file():
        model = keras.models.load_model(path, compile=False)
        encoder = model if isinstance(model, Encoder) else getattr(model, "encoder", None)
        if not isinstance(encoder, Encoder):
            raise ValueError(f"{path} holds a {type(model).__name__} with no tfbert encoder")
        return encoder
    raise FileNotFoundError(f"{path}: expected a .keras file or a folder with encoder.keras or config.json")
