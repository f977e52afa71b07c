"""Fixtures of the learning tests: MiniLM's WordPiece, a compact token table, MiniLM's first two layers.

The learning tests are split over several files so that `pytest -n 2 --dist loadfile` (one file per
worker) spreads their minutes over both CI workers; the session scope shares these between the files a
worker runs.
"""

import pytest

from task_fixtures import CompactVocabulary, minilm_tokenizer, truncated_minilm


@pytest.fixture(scope="session")
def tokenizer(assets):
    return minilm_tokenizer(assets)


@pytest.fixture
def vocabulary(tokenizer):
    return CompactVocabulary(tokenizer)


@pytest.fixture(scope="session")
def small_encoder_weights(assets):
    encoder = truncated_minilm(assets)
    return encoder.config, encoder.get_weights()
