"""The `tfbert` command line: main paths and bad input."""

import keras
import pytest

from tfbert.cli import main


def test_configs_lists_every_config_with_its_count(capsys):
    assert main(["configs"]) == 0
    out = capsys.readouterr().out
    assert "bert_base" in out and "109,482,240" in out
    assert "albert_xxlarge" in out and "222,595,584" in out


def test_convert_huggingface_writes_a_loadable_keras_file(assets, tmp_path, capsys):
    output = tmp_path / "minilm.keras"
    assert main(["convert", "huggingface", str(assets("minilm/config.json").parent), "-o", str(output)]) == 0
    assert "22,713,216 parameters" in capsys.readouterr().out
    assert keras.models.load_model(output).count_params() == 22_713_216


def test_convert_bad_input_exits_2_with_a_message(tmp_path, capsys):
    assert main(["convert", "huggingface", str(tmp_path), "-o", str(tmp_path / "x.keras")]) == 2
    assert "config.json" in capsys.readouterr().err
    assert main(["convert", "huggingface", str(tmp_path), "-o", str(tmp_path / "x.h5")]) == 2
    assert "must end with .keras" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", "onnx", str(tmp_path), "-o", "x.keras"])
    assert exit_info.value.code == 2
