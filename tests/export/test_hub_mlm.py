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



def test_encoder_mlm_lists_the_encoder_and_head_variables(pretrained_pair, models):
    """What `hub.KerasLayer(encoder.mlm, trainable=True)` trains: the encoder's and the masked-LM head's
    trainable variables, each once (the head's decoder is the tied token embedding)."""
    _, encoder = pretrained_pair
    model = models["fill_mask"]
    expected = [variable.path for variable in model.encoder.trainable_variables
                + model.get_layer("mlm_head").trainable_variables]
    listed = [variable.name.removesuffix(":0") for variable in encoder.mlm.trainable_variables]
    assert sorted(listed) == sorted(set(expected))
    assert {variable.name for variable in encoder.mlm.variables} >= {variable.name for variable in encoder.variables}
    assert list(encoder.mlm.regularization_losses) == []
