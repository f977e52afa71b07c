"""`tfbert convert tf1`: Google's release folders (BERT, ALBERT, ELECTRA) against the Hugging Face models they hold.

Each folder is written from a random-initialised `transformers` model under the original code's
variable names (`tf1_releases.py`); the Hugging Face model computes what Google's code computes
(BERT and ALBERT with the tanh GELU of their `modeling.py`, ELECTRA with the exact one).
"""

import keras
import numpy as np
import pytest
import sentencepiece
import torch
import transformers

from tfbert.cli import main
from tfbert.convert.tf1 import read_release, release_tokenizer
from tfbert.finetuning.pretrained import load_pretrained_encoder, load_pretrained_tokenizer

from tf1_releases import (albert_tensors, bert_tensors, close_on_real_tokens, electra_tensors, padded_batch,
                          write_checkpoint, write_json, write_vocab)

TOLERANCE = 1e-4
BERT = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
            max_position_embeddings=64, type_vocab_size=2)
ALBERT = dict(vocab_size=1000, embedding_size=16, hidden_size=32, num_hidden_layers=4, num_hidden_groups=2,
              inner_group_num=2, num_attention_heads=4, intermediate_size=37, max_position_embeddings=64,
              type_vocab_size=2)
# ELECTRA's sizes come from the checkpoint's shapes: heads are 64 wide and the generator's feed-forward 4x.
ELECTRA = dict(vocab_size=99, embedding_size=32, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=200, max_position_embeddings=64, type_vocab_size=2, hidden_act="gelu")
ELECTRA_GENERATOR = dict(ELECTRA, hidden_size=64, num_attention_heads=1, intermediate_size=256)


def _torch(inputs):
    return dict(input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
                token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
                attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long))


def _at(logits, positions):
    return np.take_along_axis(logits.numpy(), positions[:, :, None].astype(np.int64), axis=1)


def _convert(folder, output, *flags):
    assert main(["convert", "tf1", str(folder), "-o", str(output), *flags]) == 0
    return keras.models.load_model(output)


@pytest.fixture(scope="module")
def bert_release(tmp_path_factory):
    torch.manual_seed(0)
    model = transformers.BertForPreTraining(transformers.BertConfig(**BERT, hidden_act="gelu_new")).eval()
    folder = tmp_path_factory.mktemp("bert") / "uncased_L-2_H-32_A-4"
    folder.mkdir()
    write_checkpoint(folder / "bert_model.ckpt", bert_tensors(model, BERT["num_hidden_layers"]))
    write_json(folder / "bert_config.json", {**BERT, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
                                             "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02})
    write_vocab(folder / "vocab.txt", BERT["vocab_size"])
    return folder, model


@pytest.fixture(scope="module")
def albert_release(tmp_path_factory, assets):
    torch.manual_seed(1)
    model = transformers.AlbertForPreTraining(transformers.AlbertConfig(**ALBERT)).eval()
    folder = tmp_path_factory.mktemp("albert") / "albert_base"
    folder.mkdir()
    write_checkpoint(folder / "model.ckpt-best", albert_tensors(model, 2, 2))
    write_json(folder / "albert_config.json", {**ALBERT, "hidden_act": "gelu"})
    (folder / "30k-clean.model").write_bytes(assets("spm/botchan_en_unigram_1000.model").read_bytes())
    return folder, model


@pytest.fixture(scope="module")
def electra_release(tmp_path_factory):
    torch.manual_seed(2)
    discriminator = transformers.ElectraForPreTraining(transformers.ElectraConfig(**ELECTRA)).eval()
    generator = transformers.ElectraForMaskedLM(transformers.ElectraConfig(**ELECTRA_GENERATOR)).eval()
    generator.electra.embeddings.load_state_dict(discriminator.electra.embeddings.state_dict())
    folder = tmp_path_factory.mktemp("electra") / "electra_small"
    folder.mkdir()
    layers = ELECTRA["num_hidden_layers"]
    write_checkpoint(folder / "electra_small", electra_tensors(discriminator, generator, layers, layers))
    (folder / "checkpoint").write_text('model_checkpoint_path: "electra_small"\n')
    write_vocab(folder / "vocab.txt", ELECTRA["vocab_size"])
    return folder, discriminator, generator


def test_bert_with_heads_matches_the_original(bert_release, tmp_path):
    folder, reference = bert_release
    model = _convert(folder, tmp_path / "bert" / "model.keras", "--heads")
    inputs, positions = padded_batch(BERT["vocab_size"])
    ours = model({**inputs, "masked_positions": positions}, training=False)
    encoded = model.encoder(inputs, training=False)
    with torch.no_grad():
        theirs = reference(**_torch(inputs))
        base = reference.bert(**_torch(inputs))
    close_on_real_tokens(encoded["sequence_output"], base.last_hidden_state, inputs["padding_mask"])
    np.testing.assert_allclose(encoded["pooled_output"], base.pooler_output, atol=TOLERANCE, rtol=0)
    np.testing.assert_allclose(ours["mlm_logits"], _at(theirs.prediction_logits, positions), atol=TOLERANCE, rtol=0)
    np.testing.assert_allclose(ours["nsp_logits"], theirs.seq_relationship_logits, atol=TOLERANCE, rtol=0)
    tokenizer = load_pretrained_tokenizer(tmp_path / "bert" / "model.keras")
    assert type(tokenizer).__name__ == "WordPieceTokenizer" and tokenizer.lowercase
    assert tokenizer.vocabulary() == (folder / "vocab.txt").read_text().split()


def test_bert_encoder_alone_and_casing_from_flags(bert_release, tmp_path):
    folder, reference = bert_release
    output = tmp_path / "cased" / "model.keras"
    _convert(folder, output, "--cased")
    encoder = load_pretrained_encoder(output)
    inputs, _ = padded_batch(BERT["vocab_size"], seed=3)
    with torch.no_grad():
        base = reference.bert(**_torch(inputs))
    close_on_real_tokens(encoder(inputs)["sequence_output"], base.last_hidden_state, inputs["padding_mask"])
    assert type(encoder).__name__ == "Encoder" and not load_pretrained_tokenizer(output).lowercase


def test_albert_two_groups_of_two_with_heads_matches_the_original(albert_release, tmp_path, assets):
    folder, reference = albert_release
    output = tmp_path / "albert" / "model.keras"
    model = _convert(folder, output, "--heads")
    inputs, positions = padded_batch(ALBERT["vocab_size"])
    ours = model({**inputs, "masked_positions": positions}, training=False)
    encoded = model.encoder(inputs, training=False)
    with torch.no_grad():
        theirs = reference(**_torch(inputs))
        base = reference.albert(**_torch(inputs))
    close_on_real_tokens(encoded["sequence_output"], base.last_hidden_state, inputs["padding_mask"])
    np.testing.assert_allclose(encoded["pooled_output"], base.pooler_output, atol=TOLERANCE, rtol=0)
    np.testing.assert_allclose(ours["mlm_logits"], _at(theirs.prediction_logits, positions), atol=TOLERANCE, rtol=0)
    np.testing.assert_allclose(ours["sop_logits"], theirs.sop_logits, atol=TOLERANCE, rtol=0)
    tokenizer = load_pretrained_tokenizer(output)
    processor = sentencepiece.SentencePieceProcessor(model_file=str(folder / "30k-clean.model"))
    text = "Then I Went Home, and the Matter ended."
    assert tokenizer.tokenize([text]).to_list()[0] == processor.encode(text.lower())


def test_electra_generator_and_discriminator_match_the_original(electra_release, tmp_path):
    folder, discriminator, generator = electra_release
    model = _convert(folder, tmp_path / "electra" / "model.keras", "--heads")
    assert model.config.generator.hidden_size == ELECTRA_GENERATOR["hidden_size"]
    inputs, positions = padded_batch(ELECTRA["vocab_size"])
    ours = model({**inputs, "masked_positions": positions}, training=False)
    sequence = model.discriminator(inputs, training=False)["sequence_output"]
    with torch.no_grad():
        theirs = discriminator(**_torch(inputs), output_hidden_states=True)
        generated = generator(**_torch(inputs))
    close_on_real_tokens(sequence, theirs.hidden_states[-1], inputs["padding_mask"])
    close_on_real_tokens(model.get_layer("discriminator_head")(sequence), theirs.logits, inputs["padding_mask"])
    np.testing.assert_allclose(ours["mlm_logits"], _at(generated.logits, positions), atol=TOLERANCE, rtol=0)


def test_electra_discriminator_alone_is_an_encoder(electra_release, tmp_path):
    folder, discriminator, _ = electra_release
    output = tmp_path / "discriminator" / "model.keras"
    encoder = _convert(folder, output)
    inputs, _ = padded_batch(ELECTRA["vocab_size"], seed=5)
    with torch.no_grad():
        theirs = discriminator.electra(**_torch(inputs))
    close_on_real_tokens(encoder(inputs)["sequence_output"], theirs.last_hidden_state, inputs["padding_mask"])
    assert not encoder.config.pooler and load_pretrained_tokenizer(output).lowercase


def test_electra_hparams_json_gives_the_sizes_the_shapes_give(electra_release, tmp_path):
    folder, _, _ = electra_release
    inferred = read_release(folder).config
    copy = tmp_path / "electra_small"
    copy.mkdir()
    for path in folder.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    write_json(copy / "hparams.json", {
        "model_size": "small", "vocab_size": 99, "embedding_size": 32, "generator_hidden_size": 0.5,
        "model_hparam_overrides": {"hidden_size": 128, "num_hidden_layers": 2, "intermediate_size": 200,
                                   "max_position_embeddings": 64}})
    assert read_release(copy).config.encoder == inferred.encoder
    assert read_release(copy).config.generator == inferred.generator


def test_albert_tf_hub_module_layout_reads_as_the_release(albert_release, tmp_path):
    """A TF-Hub module of the same model: `variables/variables.*`, config and vocabulary in `assets/`."""
    folder, _ = albert_release
    hub = tmp_path / "albert_base_hub"
    for sub in ("variables", "assets"):
        (hub / sub).mkdir(parents=True)
    for path in folder.glob("model.ckpt-best.*"):
        (hub / "variables" / path.name.replace("model.ckpt-best", "variables")).write_bytes(path.read_bytes())
    for name in ("albert_config.json", "30k-clean.model"):
        (hub / "assets" / name).write_bytes((folder / name).read_bytes())
    (hub / "saved_model.pb").write_bytes(b"")
    release, module = read_release(folder), read_release(hub)
    assert module.config.encoder == release.config.encoder and module.spec.name == "albert"
    name = "bert/encoder/transformer/group_1/inner_group_1/LayerNorm_1/gamma"
    np.testing.assert_array_equal(module.tensors[name], release.tensors[name])
    assert release_tokenizer(module).vocabulary() == release_tokenizer(release).vocabulary()
