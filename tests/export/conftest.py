"""Exports shared by the export tests: one tiny model per task, all on MiniLM's WordPiece vocabulary."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from built_once import built_once
from fresh_process import load_arrays, save_arrays

SEQUENCE_LENGTH = 32
LABELS = ["entailment", "neutral", "contradiction"]
TAGS = ["O", "B-PER", "I-PER"]
TEXTS = ["Ada Lovelace wrote the first program.", "hello", "Straße in 東京, naïve café!", "a b c d e f g"]
PAIRS = ["Who wrote it?", "world", "Zürich", "x"]
QUESTIONS = ["Who wrote the first program?", "Where is it?", "What?", "Why not?"]
CONTEXTS = ["The first program was written by Ada Lovelace in 1843.", "It is in Zürich, naïve café.", "Nothing.",
            "Because the café in 東京 is closed."]
CHOICES = [["a poem", "a program", "a song"], ["in Zürich", "in Paris", "nowhere"], ["x", "", "y"],
           ["the café is closed", "東京", "it rains"]]
MASKED = ["paris is the [MASK] of france.", "the [MASK] sat on the [MASK].", "no mask here", "[MASK]"]


@pytest.fixture(scope="session")
def tokenizer(assets):
    from tfbert.text import WordPieceTokenizer

    return WordPieceTokenizer(assets("minilm/vocab.txt"))


@pytest.fixture(scope="session")
def tiny_config(tokenizer):
    from tfbert.config import load_config

    config = load_config("bert_tiny")
    return config.replace(encoder=config.encoder.replace(vocab_size=tokenizer.vocabulary_size(), num_layers=1,
                                                         max_positions=64))


@pytest.fixture(scope="session")
def models(tiny_config):
    """In-memory models by task; the tiny encoder is shared (random weights, seed 0)."""
    import keras

    from tfbert.models.encoder import Encoder
    from tfbert.models.pretraining import PretrainingModel
    from tfbert.tasks import (MultipleChoice, SentenceEmbedder, SequenceClassifier, SequenceRegressor, SpanExtractor,
                              TokenClassifier)

    keras.utils.set_random_seed(0)
    encoder = Encoder(tiny_config.encoder, name="encoder")
    return {
        "classification": SequenceClassifier(encoder, num_classes=3),
        "regression": SequenceRegressor(encoder),
        "tagging": TokenClassifier(encoder, num_tags=3),
        "question_answering": SpanExtractor(encoder),
        "multiple_choice": MultipleChoice(encoder),
        "embedding": SentenceEmbedder(encoder, pooling="mean"),
        "fill_mask": PretrainingModel(tiny_config),
    }


@pytest.fixture(scope="session")
def exports(models, tokenizer, tmp_path_factory):
    """`task -> version folder` of each model exported at SEQUENCE_LENGTH, built once per test run: the
    xdist workers share it (`built_once`), and each worker's `models` hold the same weights (seed 0)."""
    from tfbert.export import export_saved_model

    options = {"classification": {"label_names": LABELS, "pair": True}, "tagging": {"label_names": TAGS}}

    def export_all(root: Path) -> dict[str, str]:
        return {task: str(export_saved_model(model, task, tokenizer=tokenizer, output_dir=root,
                                             sequence_length=SEQUENCE_LENGTH, **options.get(task, {})))
                for task, model in models.items()}

    return {task: Path(path) for task, path in built_once(tmp_path_factory, "saved_models", export_all).items()}


@pytest.fixture(scope="session")
def loaded(exports):
    return {task: tf.saved_model.load(str(path)) for task, path in exports.items()}


def strings(values) -> np.ndarray:
    return np.array([value.encode("utf-8") if isinstance(value, str) else value for value in values], dtype=object)


def run_in_fresh_process(requests, tmp_path: Path) -> dict[str, dict[str, np.ndarray]]:
    """Runs `(key, directory, signature, inputs)` requests in a fresh process; `{key: {output: array}}`."""
    requests_dir, results_dir = tmp_path / "requests", tmp_path / "results"
    requests_dir.mkdir(parents=True, exist_ok=True)
    results_dir.mkdir(parents=True, exist_ok=True)
    index = [{"key": key, "directory": str(directory), "signature": signature}
             for key, directory, signature, _ in requests]
    (requests_dir / "requests.json").write_text(json.dumps(index), encoding="utf-8")
    save_arrays(requests_dir, {f"{key}/{name}": value for key, _, _, inputs in requests for name, value in inputs.items()})
    script = Path(__file__).with_name("fresh_process.py")
    completed = subprocess.run([sys.executable, str(script), str(requests_dir), str(results_dir)],
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    results: dict[str, dict[str, np.ndarray]] = {}
    for name, value in load_arrays(results_dir).items():
        key, output = name.split("/", 1)
        results.setdefault(key, {})[output] = value
    return results
