"""The conformance suite's fixtures: one parameter per family registered in `tfbert.architectures`,
its tiny config on MiniLM's WordPiece vocabulary (so the export test can tokenize text)."""

import keras
import pytest
from conformance_families import tiny_config

from tfbert import architectures


@pytest.fixture(scope="session")
def wordpiece(assets):
    from tfbert.text import WordPieceTokenizer

    return WordPieceTokenizer(assets("minilm/vocab.txt"))


@pytest.fixture(params=architectures.names())
def family(request):
    return request.param


@pytest.fixture
def config(family, wordpiece):
    keras.utils.set_random_seed(0)
    return tiny_config(family, wordpiece.vocabulary_size())
