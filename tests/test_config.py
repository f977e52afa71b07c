"""The config type: validation messages, YAML round trips and the shipped configs."""

import pytest

from tfbert.config import (EncoderConfig, ModelConfig, PretrainingDefaults, available_configs, load_config,
                           save_config)

SMALL = dict(vocab_size=100, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=64)


def test_every_shipped_config_loads_and_round_trips(tmp_path):
    names = available_configs()
    assert {"bert_tiny", "bert_mini", "bert_small", "bert_medium", "bert_base", "bert_large"} <= set(names)
    assert {"albert_tiny", "albert_base", "albert_large", "albert_xlarge", "albert_xxlarge"} <= set(names)
    for name in names:
        config = load_config(name)
        save_config(config, tmp_path / f"{name}.yaml")
        assert load_config(tmp_path / f"{name}.yaml") == config


def test_papers_sizes():
    sizes = {name: (c.encoder.num_layers, c.encoder.hidden_size, c.encoder.num_heads, c.encoder.intermediate_size)
             for name in available_configs() for c in [load_config(name)]}
    for name, (layers, hidden) in {"tiny": (2, 128), "mini": (4, 256), "small": (4, 512), "medium": (8, 512),
                                   "base": (12, 768), "large": (24, 1024)}.items():
        assert sizes[f"bert_{name}"] == (layers, hidden, hidden // 64, 4 * hidden)
    for name, (layers, hidden) in {"base": (12, 768), "large": (24, 1024), "xlarge": (24, 2048),
                                   "xxlarge": (12, 4096)}.items():
        config = load_config(f"albert_{name}").encoder
        assert (config.num_layers, config.hidden_size) == (layers, hidden)
        assert (config.embedding_size, config.vocab_size, config.sharing) == (128, 30000, "all")


def test_embedding_size_defaults_to_hidden_size():
    assert EncoderConfig(**SMALL).embedding_size == 32


@pytest.mark.parametrize(
    "changes,field,fragment",
    [
        ({"hidden_size": 30}, "hidden_size", "divisible by num_heads"),
        ({"sharing": "some"}, "sharing", "none, all, attention, ffn"),
        ({"num_layers": 0}, "num_layers", ">= 1"),
        ({"vocab_size": -5}, "vocab_size", ">= 1"),
        ({"intermediate_size": 2.5}, "intermediate_size", "integer"),
        ({"num_heads": True}, "num_heads", "integer"),
        ({"dropout_rate": 1.5}, "dropout_rate", "[0, 1)"),
        ({"activation": "swishy"}, "activation", "gelu"),
        ({"pooler": "yes"}, "pooler", "true or false"),
        ({"num_hidden_groups": 2}, "num_hidden_groups", "sharing"),
        ({"sharing": "all", "num_hidden_groups": 3}, "num_hidden_groups", "at most num_layers"),
        ({"pad_id": 100}, "pad_id", "smaller than vocab_size"),
        ({"layer_norm_epsilon": 0}, "layer_norm_epsilon", "> 0"),
    ],
)
def test_bad_values_name_the_field_value_and_what_is_allowed(changes, field, fragment):
    with pytest.raises(ValueError) as error:
        EncoderConfig(**{**SMALL, **changes})
    message = str(error.value)
    assert repr(field) in message
    assert repr(next(iter(changes.values())) if len(changes) == 1 else changes[field]) in message
    assert fragment in message


def test_unknown_and_missing_keys():
    with pytest.raises(ValueError, match=r"'encoder.hiden_size'.*unknown key.*hidden_size"):
        EncoderConfig.from_dict({**SMALL, "hiden_size": 32})
    with pytest.raises(ValueError, match="'vocab_size' is missing"):
        EncoderConfig.from_dict({"hidden_size": 32})
    with pytest.raises(ValueError, match="'architecture'.*'gpt'.*bert, albert"):
        ModelConfig.from_dict({"architecture": "gpt", "encoder": SMALL})


def test_yaml_errors_name_the_file(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("architecture: bert\nencoder: [unclosed\n")
    with pytest.raises(ValueError, match="broken.yaml.*not valid YAML"):
        load_config(broken)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("architecture: bert\nencoder:\n  vocab_size: 100\n  hidden_size: 30\n  num_heads: 4\n")
    with pytest.raises(ValueError, match="wrong.yaml.*'hidden_size': got 30"):
        load_config(wrong)
    with pytest.raises(FileNotFoundError, match="missing.yaml"):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(ValueError, match="unknown config 'bert_huge'.*bert_base"):
        load_config("bert_huge")


def test_albert_group_assignment_matches_albert():
    config = EncoderConfig(**{**SMALL, "num_layers": 12, "sharing": "all", "num_hidden_groups": 3})
    assert [config.group_of_layer(i) for i in range(12)] == [0] * 4 + [1] * 4 + [2] * 4


def test_pretraining_recipe_section(tmp_path):
    config = ModelConfig.from_dict({"architecture": "albert", "encoder": SMALL,
                                    "pretraining": {"optimizer": "bert", "learning_rate": 1e-3}})
    assert config.pretraining == PretrainingDefaults(optimizer="bert", learning_rate=1e-3)
    assert config.to_dict()["pretraining"] == {"optimizer": "bert", "learning_rate": 1e-3}
    save_config(config, tmp_path / "recipe.yaml")
    assert load_config(tmp_path / "recipe.yaml") == config
    assert "pretraining" not in load_config("albert_base").to_dict()
    with pytest.raises(ValueError, match="'pretraining.learning_rate': got -1"):
        ModelConfig.from_dict({"architecture": "bert", "encoder": SMALL, "pretraining": {"learning_rate": -1}})
    with pytest.raises(ValueError, match="'pretraining.warmup_fraction': got 1.5"):
        ModelConfig.from_dict({"architecture": "bert", "encoder": SMALL, "pretraining": {"warmup_fraction": 1.5}})
    with pytest.raises(ValueError, match="'pretraining.lr'.*unknown key"):
        ModelConfig.from_dict({"architecture": "bert", "encoder": SMALL, "pretraining": {"lr": 1e-3}})
