"""A family defined outside tfbert (the package tests/architectures/mybert/), registered: configs, the command line,
Hugging Face conversion and export all read it from the registry, with no other code changed."""

import json

import numpy as np
import pytest

from mybert.spec import SPEC
from tfbert import architectures
from tfbert.cli import main
from tfbert.config import ModelConfig, load_config

HF_CONFIG = dict(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                 max_position_embeddings=64, type_vocab_size=1, hidden_act="gelu")


@pytest.fixture(scope="module")
def mybert():
    architectures.register(SPEC)
    yield SPEC
    architectures.unregister(SPEC.name)


@pytest.fixture(scope="module")
def checkpoint(mybert, tmp_path_factory):
    """A random Hugging Face `BertForMaskedLM` saved as a `mybert` checkpoint, and the model itself."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(**HF_CONFIG)).eval()
    folder = tmp_path_factory.mktemp("mybert")
    model.save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "mybert"}))
    return folder, model


def test_a_config_gets_the_family_defaults_and_round_trips(mybert, tmp_path):
    path = tmp_path / "mybert_tiny.yaml"
    path.write_text("architecture: mybert\nencoder:\n  vocab_size: 100\n  hidden_size: 32\n  num_layers: 2\n"
                    "  num_heads: 4\n  intermediate_size: 64\n")
    config = load_config(path)
    assert config.encoder.type_vocab_size == 1          # SPEC.encoder_defaults
    assert ModelConfig.from_dict(config.to_dict()) == config
    assert mybert.optimizer == "bert" and mybert.build_pretraining_model(config).pair_objective is None


def test_the_command_line_lists_it(mybert, capsys):
    assert main(["configs", "--architecture", "mybert"]) == 0   # a choice now; no shipped config has it
    assert capsys.readouterr().out.startswith("config")
    for command in ("pretrain", "convert"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "mybert" in capsys.readouterr().out


def test_a_hugging_face_checkpoint_converts_with_its_heads(checkpoint):
    import torch

    from tfbert.convert.huggingface import huggingface_config, load_huggingface

    folder, reference = checkpoint
    model = load_huggingface(folder, heads=True)
    assert model.config.architecture == "mybert" and huggingface_config(model.config)["model_type"] == "mybert"
    ids = np.array([[101, 2023, 103, 2003, 1037, 3231, 102]], "int32")
    positions = np.array([[1, 2, 3]], "int32")
    ours = model({"token_ids": ids, "segment_ids": 0 * ids, "padding_mask": 1 + 0 * ids,
                  "masked_positions": positions})["mlm_logits"]
    with torch.no_grad():
        theirs = reference(input_ids=torch.tensor(ids, dtype=torch.long)).logits.numpy()[:, 1:4]
    np.testing.assert_allclose(np.asarray(ours), theirs, atol=1e-4)


def test_export_packs_as_the_family_says(checkpoint, assets):
    import tensorflow as tf

    from tfbert.export.module import PreprocessingModule
    from tfbert.export.saved_model import export_preprocessor
    from tfbert.export.sources import resolve_source
    from tfbert.text import WordPieceTokenizer

    folder, _ = checkpoint
    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"))
    pretraining_model = architectures.get("mybert").build_pretraining_model(load_config_of(folder))
    assert resolve_source(pretraining_model).task == "fill_mask"             # SPEC.export_tasks
    source = resolve_source(folder)                                          # the checkpoint folder: embeddings
    assert (source.task, source.architecture) == ("embedding", "mybert")
    preprocessor = export_preprocessor(source, tokenizer, sequence_length=16)
    assert preprocessor.get_config()["packing_style"] == "roberta"
    preprocess = PreprocessingModule(preprocessor, pair=True).signatures()["preprocess"]
    packed = preprocess(text=tf.constant(["hello"]), text_pair=tf.constant(["world"]))
    hello, world = tokenizer.tokenize(tf.constant(["hello", "world"])).to_list()
    cls, sep = tokenizer.cls_id, tokenizer.sep_id
    assert packed["input_word_ids"].numpy()[0, :7].tolist() == [cls, *hello, sep, sep, *world, sep, 0][:7]
    assert packed["input_type_ids"].numpy().max() == 0


def load_config_of(folder) -> ModelConfig:
    from tfbert.convert.huggingface import config_from_huggingface

    return config_from_huggingface(json.loads((folder / "config.json").read_text()))


def test_a_name_is_registered_once_and_unregistered_it_is_gone(mybert):
    with pytest.raises(ValueError, match="'mybert' is already registered"):
        architectures.register(SPEC)
    architectures.unregister("mybert")
    try:
        assert "mybert" not in architectures.names()
        with pytest.raises(ValueError, match="'architecture'.*'mybert'.*allowed: bert, albert"):
            ModelConfig.from_dict({"architecture": "mybert", "encoder": {"vocab_size": 10}})
        with pytest.raises(ValueError, match="model_type 'mybert' is not supported; supported: bert, albert"):
            architectures.with_format("huggingface", "mybert")
    finally:
        architectures.register(SPEC)
