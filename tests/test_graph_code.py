"""AutoGraph calls tfbert's functions as they are (`tfbert/graph_code.py`) and still converts the user's own."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.autograph.impl import api

from tfbert.data import MaskedLMMasker, SegmentPacker, line_by_line_dataset
from tfbert.text import WordPieceTokenizer


@pytest.fixture
def converted(monkeypatch):
    """The functions AutoGraph rewrites while the test runs, by module."""
    modules = []
    convert = api._convert_actual

    def recording(entity, program_ctx):
        modules.append(getattr(entity, "__module__", ""))
        return convert(entity, program_ctx)

    monkeypatch.setattr(api, "_convert_actual", recording)
    return modules


def test_a_pretraining_pipeline_is_built_without_rewriting_tfbert_functions(converted, assets, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\nhello world\n" * 8, encoding="utf-8")
    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"), lowercase=True)
    packer = SegmentPacker(16, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id, style="bert")
    masker = MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=3)
    dataset = line_by_line_dataset(tf.data.TextLineDataset(str(corpus)), tokenizer.tokenize, packer=packer,
                                   masker=masker, batch_size=4, seed=0)
    batch = next(iter(dataset))
    assert batch["token_ids"].shape == (4, 16)
    assert np.all(batch["token_ids"].numpy()[:, 0] == tokenizer.cls_id)
    assert not [module for module in converted if module.startswith("tfbert")]


def test_the_users_own_function_is_still_converted(converted):
    def clipped(x):
        if x > 2:   # a Python condition on a tensor: only AutoGraph makes it graph code
            return tf.constant(2)
        return x

    values = tf.data.Dataset.from_tensor_slices([1, 3]).map(clipped)
    assert [int(value) for value in values] == [1, 2]
    assert __name__ in converted


def test_tfbert_autograph_convert_in_the_environment_keeps_autograph_rewriting_tfbert(monkeypatch):
    from tensorflow.python.autograph.core import config
    from tensorflow.python.autograph.impl import conversion

    from tfbert.data.readers import cut_rows
    from tfbert.graph_code import declare_graph_code

    without = tuple(rule for rule in config.CONVERSION_RULES if not rule.matches("tfbert"))
    monkeypatch.setattr(config, "CONVERSION_RULES", without)
    monkeypatch.setenv("TFBERT_AUTOGRAPH", "convert")
    declare_graph_code()
    assert not conversion.is_allowlisted(cut_rows)
    monkeypatch.delenv("TFBERT_AUTOGRAPH")
    declare_graph_code()
    declare_graph_code()
    assert conversion.is_allowlisted(cut_rows)
    assert len(config.CONVERSION_RULES) == len(without) + 1
