"""`tfbert convert` on bad input: one line naming the file, variable or field, exit status 2, nothing written.

Each case starts from a valid folder of its source (a TF1 BERT or ELECTRA release, a Hugging Face
checkpoint, a keras-hub preset), breaks one thing, and checks the message and that neither the
output nor its `tokenizer/` nor any temporary file is left behind.
"""

import json
import shutil
from pathlib import Path

import keras
import keras_hub
import numpy as np
import pytest
import torch
import transformers

from tfbert.cli import main

from tf1_releases import bert_tensors, electra_tensors, write_checkpoint, write_json, write_vocab

BERT = dict(vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=20,
            max_position_embeddings=16, type_vocab_size=2)
ELECTRA = dict(vocab_size=40, embedding_size=8, hidden_size=64, num_hidden_layers=1, num_attention_heads=1,
               intermediate_size=20, max_position_embeddings=16, type_vocab_size=2)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """Valid folders of each source: name -> path."""
    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("sources")
    bert = root / "uncased_L-1_H-16_A-2"
    bert.mkdir()
    model = transformers.BertForPreTraining(transformers.BertConfig(**BERT, hidden_act="gelu_new"))
    tensors = bert_tensors(model, 1)
    write_checkpoint(bert / "bert_model.ckpt", {name: value for name, value in tensors.items()
                                                if not name.startswith("cls/")})
    write_json(bert / "bert_config.json", BERT)
    write_vocab(bert / "vocab.txt", BERT["vocab_size"])
    electra = root / "electra_small"
    electra.mkdir()
    discriminator = transformers.ElectraForPreTraining(transformers.ElectraConfig(**ELECTRA))
    generator = transformers.ElectraForMaskedLM(transformers.ElectraConfig(**ELECTRA))
    write_checkpoint(electra / "electra_small", {
        name: value for name, value in electra_tensors(discriminator, generator, 1, 1).items()
        if name.startswith(("electra/", "discriminator_predictions/"))})
    write_vocab(electra / "vocab.txt", ELECTRA["vocab_size"])
    huggingface = root / "huggingface"
    transformers.BertModel(transformers.BertConfig(**BERT)).save_pretrained(huggingface)
    preset = root / "keras_hub"
    keras_hub.models.BertBackbone(vocabulary_size=40, num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=20,
                                  max_sequence_length=16).save_to_preset(str(preset))
    return {"tf1": bert, "electra": electra, "huggingface": huggingface, "keras-hub": preset}


def _edit_json(path, **changes):
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def _remove_json_key(path, *keys):
    data = json.loads(path.read_text())
    inner = data
    for key in keys[:-1]:
        inner = inner[key]
    inner.pop(keys[-1])
    path.write_text(json.dumps(data))


def _second_checkpoint(folder):
    for path in folder.glob("bert_model.ckpt.*"):
        shutil.copy(path, folder / path.name.replace("bert_model.ckpt", "model.ckpt-1"))


def _foreign_checkpoint(folder):
    for path in folder.glob("bert_model.ckpt.*"):
        path.unlink()
    write_checkpoint(folder / "model.ckpt", {"transformer/layer_0/kernel": np.zeros((2, 2), np.float32)})


def _renamed(folder, name):
    target = folder.parent / name
    folder.rename(target)
    return target


# (case, source folder, how to break it (returning the folder to convert when it moves it), extra flags,
#  words the one-line message must hold)
CASES = [
    ("no folder", "tf1", lambda f: f / "nothing", [], ["nothing", "no such folder"]),
    ("no checkpoint", "tf1", lambda f: [p.unlink() for p in f.glob("bert_model.ckpt.*")], [],
     ["no TF1 checkpoint", "bert_model.ckpt.index", "bert_config.json"]),
    ("index without data", "tf1", lambda f: [p.unlink() for p in f.glob("*.data-*")], [],
     ["bert_model.ckpt", "cannot be read", ".data-*", "No such file"]),
    ("two checkpoints", "tf1", _second_checkpoint, [], ["2 checkpoints", "bert_model.ckpt", "model.ckpt-1"]),
    ("unknown names", "tf1", _foreign_checkpoint, [],
     ["matches no known TF1 layout", "bert/encoder/layer_0/attention/self/query/kernel (bert)",
      "electra/encoder/layer_0", "transformer/layer_0/kernel"]),
    ("no config", "tf1", lambda f: (f / "bert_config.json").unlink(), [],
     ["bert_config.json does not exist", "bert checkpoint", "vocab.txt"]),
    ("config not JSON", "tf1", lambda f: (f / "bert_config.json").write_text("{hidden_size: 16"), [],
     ["bert_config.json is not valid JSON"]),
    ("config field missing", "tf1", lambda f: _remove_json_key(f / "bert_config.json", "vocab_size"), [],
     ["bert_config.json", "required field 'vocab_size' is missing"]),
    ("config does not match shapes", "tf1", lambda f: _edit_json(f / "bert_config.json", hidden_size=32), [],
     ["bert_config.json", "bert/embeddings/word_embeddings", "(40, 16)", "(40, 32)", "does not match"]),
    ("unknown activation", "tf1", lambda f: _edit_json(f / "bert_config.json", hidden_act="swish"), [],
     ["bert_config.json", "hidden_act 'swish' is not supported"]),
    ("heads not in checkpoint", "tf1", lambda f: None, ["--heads"],
     ["is missing", "cls/predictions/transform/dense/kernel"]),
    ("no vocabulary", "tf1", lambda f: (f / "vocab.txt").unlink(), [], ["has no vocab.txt", "bert checkpoint"]),
    ("vocabulary too large", "tf1", lambda f: write_vocab(f / "vocab.txt", 50), [],
     ["vocab.txt has 50 tokens", "vocab_size 40"]),
    ("casing unknown", "tf1", lambda f: _renamed(f, "my_bert"), [], ["'my_bert'", "--cased or --uncased"]),
    ("ELECTRA without generator", "electra", lambda f: None, ["--heads"], ["holds no generator", "generator/"]),
    ("ELECTRA hparams do not match", "electra",
     lambda f: write_json(f / "hparams.json", {"model_size": "small", "vocab_size": 40}), [],
     ["hparams.json", "electra/embeddings/word_embeddings", "does not match"]),
    ("casing flag elsewhere", "huggingface", lambda f: None, ["--cased"], ["--cased and --uncased apply to tf1"]),
    ("HF no config", "huggingface", lambda f: (f / "config.json").unlink(), [], ["config.json' does not exist"]),
    ("HF config not JSON", "huggingface", lambda f: (f / "config.json").write_text("["), [], ["config.json: not valid JSON"]),
    ("HF unknown model_type", "huggingface", lambda f: _edit_json(f / "config.json", model_type="gpt2"), [],
     ["config.json", "model_type 'gpt2' is not supported", "bert"]),
    ("HF field missing", "huggingface", lambda f: _remove_json_key(f / "config.json", "hidden_size"), [],
     ["config.json", "required field 'hidden_size' is missing"]),
    ("HF no weights", "huggingface", lambda f: (f / "model.safetensors").unlink(), [],
     ["no weights", "model.safetensors"]),
    ("HF weights corrupt", "huggingface", lambda f: (f / "model.safetensors").write_bytes(b"\0" * 16), [],
     ["model.safetensors is not a readable safetensors file"]),
    ("HF config does not match", "huggingface", lambda f: _edit_json(f / "config.json", intermediate_size=24), [],
     ["config.json", "intermediate.dense.weight", "does not match"]),
    ("keras-hub no config", "keras-hub", lambda f: (f / "config.json").unlink(), [],
     ["config.json does not exist", "model.weights.h5"]),
    ("keras-hub unknown backbone", "keras-hub", lambda f: _edit_json(f / "config.json", class_name="GPT2Backbone"),
     [], ["'GPT2Backbone' is not supported", "BertBackbone", "XLMRobertaBackbone"]),
    ("keras-hub argument missing", "keras-hub", lambda f: _remove_json_key(f / "config.json", "config", "hidden_dim"),
     [], ["config.json", "BertBackbone argument 'hidden_dim' is missing"]),
    ("keras-hub no weights", "keras-hub", lambda f: (f / "model.weights.h5").unlink(), [],
     ["model.weights.h5 does not exist"]),
    ("keras-hub heads", "keras-hub", lambda f: None, ["--heads"], ["without heads"]),
]


@pytest.mark.parametrize("case,source,breaks,flags,words", CASES, ids=[case[0] for case in CASES])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(sources, tmp_path, capsys, case, source, breaks,
                                                            flags, words):
    folder = tmp_path / sources[source].name
    shutil.copytree(sources[source], folder)
    broken = breaks(folder)
    folder = broken if isinstance(broken, Path) else folder
    output = tmp_path / "out" / "model.keras"
    command = "tf1" if source == "electra" else source
    assert main(["convert", command, str(folder), "-o", str(output), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tfbert convert: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, f"{case}: {word!r} not in {err!r}"
    assert not output.parent.exists() or not list(output.parent.iterdir())


def test_an_existing_different_tokenizer_is_kept_and_nothing_is_written(sources, tmp_path, capsys):
    output = tmp_path / "models" / "model.keras"
    (output.parent / "tokenizer").mkdir(parents=True)
    (output.parent / "tokenizer" / "vocab.txt").write_text("[UNK]\n")
    assert main(["convert", "tf1", str(sources["tf1"]), "-o", str(output)]) == 2
    err = capsys.readouterr().err
    assert "tokenizer already holds another tokenizer" in err and "NEW_FOLDER/model.keras" in err
    assert sorted(path.name for path in output.parent.iterdir()) == ["tokenizer"]
    assert [path.name for path in (output.parent / "tokenizer").iterdir()] == ["vocab.txt"]


def test_a_failed_save_leaves_nothing_and_a_rerun_completes(sources, tmp_path, capsys, monkeypatch):
    output = tmp_path / "models" / "model.keras"

    def fail_midway(model, path, *args, **kwargs):
        with open(path, "wb") as partial:
            partial.write(b"PK\x03\x04 half a zip")
        raise OSError(f"No space left on device: {path}")

    with monkeypatch.context() as patch:
        patch.setattr(keras.Model, "save", fail_midway)
        assert main(["convert", "tf1", str(sources["tf1"]), "-o", str(output)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert not output.parent.exists()   # nor the folder made for it
    assert main(["convert", "tf1", str(sources["tf1"]), "-o", str(output)]) == 0
    assert main(["convert", "tf1", str(sources["tf1"]), "-o", str(output)]) == 2
    assert "already exists (a file)" in capsys.readouterr().err
    assert main(["convert", "tf1", str(sources["tf1"]), "-o", str(output), "--overwrite"]) == 0
    assert sorted(path.name for path in output.parent.iterdir()) == ["model.keras", "tfbert.json", "tokenizer"]
    assert keras.models.load_model(output).count_params() > 0


def test_unknown_source_is_an_argument_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", "onnx", str(tmp_path), "-o", str(tmp_path / "x.keras")])
    assert exit_info.value.code == 2 and "invalid choice: 'onnx'" in capsys.readouterr().err
