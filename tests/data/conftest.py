"""Fixtures for tests/data: the MiniLM WordPiece vocabulary and real packed text."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from text_fixtures import UncasedWordPiece, botchan_lines, wikipedia_articles
from tfbert.data.packing import SegmentPacker
from tfbert.data.pretraining import contiguous_examples, tokenize_documents
from tfbert.data.readers import split_sentences

SEQUENCE_LENGTH = 128


@pytest.fixture(scope="session")
def wordpiece(assets):
    return UncasedWordPiece(assets("minilm/vocab.txt"))


@pytest.fixture(scope="session")
def lee_documents_path(assets):
    return assets("text/lee_background.cor")


@pytest.fixture(scope="session")
def real_documents(assets) -> list[str]:
    """Wikipedia articles, Lee news documents and Botchan in blocks of 40 lines, as strings."""
    wiki = wikipedia_articles(assets("text/enwiki-sample.xml.bz2"))
    lee = [line for line in open(assets("text/lee_background.cor"), encoding="utf-8") if line.strip()]
    lines = botchan_lines(assets("text/botchan.txt"))
    botchan = [" ".join(lines[i:i + 40]) for i in range(0, len(lines), 40)]
    return wiki + lee + botchan


@pytest.fixture(scope="session")
def packed_real_text(wordpiece, real_documents) -> dict[str, np.ndarray]:
    """All real documents as DOC-SENTENCES sequences of length 128, BERT layout (~5,800 rows)."""
    documents = tf.data.Dataset.from_tensor_slices(real_documents).map(split_sentences)
    tokenized = tokenize_documents(documents, wordpiece, SEQUENCE_LENGTH - 2)
    chunks = contiguous_examples(tokenized, max_num_tokens=SEQUENCE_LENGTH - 2, cross_documents=False,
                                 separator_id=wordpiece.sep_id)
    packer = SegmentPacker(SEQUENCE_LENGTH, wordpiece.cls_id, wordpiece.sep_id, wordpiece.pad_id, style="bert")
    batches = chunks.ragged_batch(1024).map(lambda chunk: packer([chunk]))
    parts = list(batches.as_numpy_iterator())
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
