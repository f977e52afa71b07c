"""`--hub-pair` of a source with a masked-LM head: the encoder SavedModel has TF Hub's `mlm` sub-object."""

import numpy as np
import pytest
import tensorflow as tf
from conftest import MASKED, SEQUENCE_LENGTH

POSITIONS = [[1, 3], [2, 5], [0, 1], [1, 1]]


@pytest.fixture(scope="module")
def pretrained_pair(models, tokenizer, tmp_path_factory):
    from tfbert.export import export_hub_pair

    directories = export_hub_pair(models["fill_mask"], "tiny_mlm", tokenizer=tokenizer,
                                  output_dir=tmp_path_factory.mktemp("hub_mlm"), sequence_length=SEQUENCE_LENGTH)
    return [tf.saved_model.load(str(directory)) for directory in directories]


def test_encoder_mlm_gives_the_pretraining_heads_logits(pretrained_pair, models):
    preprocess, encoder = pretrained_pair
    packed = preprocess(tf.constant(MASKED))
    positions = tf.constant(POSITIONS, tf.int32)
    logits = encoder.mlm({**packed, "masked_lm_positions": positions})["mlm_logits"].numpy()
    expected = models["fill_mask"]({"token_ids": packed["input_word_ids"], "padding_mask": packed["input_mask"],
                                    "segment_ids": packed["input_type_ids"], "masked_positions": positions},
                                   training=False)["mlm_logits"]
    assert logits.shape == (len(MASKED), 2, models["fill_mask"].config.encoder.vocab_size)
    np.testing.assert_allclose(logits, np.asarray(expected), atol=1e-5)

