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


def test_vocab_then_pretrain_on_real_text(assets, tmp_path, capsys):
    lines = [line for line in assets("text/botchan.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join("\n".join(lines[i:i + 20]) for i in range(0, len(lines), 20)))
    assert main(["vocab", "--kind", "sentencepiece", "--data", str(corpus), "--vocab-size", "600",
                 "--output", str(tmp_path / "vocab")]) == 0
    assert "600 tokens" in capsys.readouterr().out
    config = tmp_path / "albert.yaml"
    config.write_text("architecture: albert\nencoder:\n  vocab_size: 600\n  hidden_size: 32\n  num_layers: 2\n"
                      "  num_heads: 2\n  intermediate_size: 64\n  embedding_size: 16\n  sharing: all\n")
    arguments = ["pretrain", "--config", str(config), "--tokenizer", str(tmp_path / "vocab"), "--data", str(corpus),
                 "--model-dir", str(tmp_path / "run"), "--steps", "2", "--batch-size", "4", "--strategy", "cpu",
                 "--sequence-length", "32", "--max-predictions", "5", "--checkpoint-every", "2"]
    assert main(arguments) == 0
    assert "trained 2 steps" in capsys.readouterr().out
    assert (tmp_path / "run" / "encoder" / "encoder.keras").exists()


def test_pretrain_and_vocab_bad_input(tmp_path, capsys):
    assert main(["vocab", "--kind", "wordpiece", "--data", str(tmp_path / "none.txt"), "--vocab-size", "100",
                 "--output", str(tmp_path / "v")]) == 2
    assert "none.txt" in capsys.readouterr().err
    assert main(["pretrain", "--config", "bert_gigantic", "--tokenizer", str(tmp_path), "--data", "x.txt",
                 "--model-dir", str(tmp_path / "run"), "--steps", "1"]) == 2
    assert "unknown config 'bert_gigantic'" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("architecture: bert\nencoder: {vocab_size: [\n")
    assert main(["pretrain", "--config", str(bad), "--tokenizer", str(tmp_path), "--data", "x.txt",
                 "--model-dir", str(tmp_path / "run"), "--steps", "1"]) == 2
    assert "not valid YAML" in capsys.readouterr().err
    assert main(["pretrain", "--config", "bert_tiny", "--tokenizer", str(tmp_path / "no_tokenizer"),
                 "--data", "x.txt", "--model-dir", str(tmp_path / "run"), "--steps", "1"]) == 2
    assert "tokenizer" in capsys.readouterr().err


def test_finetune_classification_from_files_then_errors(assets, tmp_path, capsys):
    """Pang & Lee sentences in a TSV, fine-tuned from the real MiniLM checkpoint (its vocab.txt is the tokenizer)."""
    rows = [line.split(" ", 1) for line in assets("labelled/pang_lee_polarity.cor").read_text(encoding="cp1252", errors="replace").splitlines()]
    lines = [f"{text.strip()}\t{'1' if tag.endswith('pos') else '0'}" for tag, text in rows]   # 100 neg, then 100 pos
    (tmp_path / "train.tsv").write_text("\n".join(["sentence\tlabel"] + lines[:20] + lines[100:120]) + "\n")
    (tmp_path / "dev.tsv").write_text("\n".join(["sentence\tlabel"] + lines[20:30] + lines[120:130]) + "\n")
    minilm = str(assets("minilm/config.json").parent)
    arguments = ["finetune", "--pretrained", minilm, "--train", str(tmp_path / "train.tsv"), "--eval",
                 str(tmp_path / "dev.tsv"), "--model-dir", str(tmp_path / "run"), "--epochs", "1", "--batch-size", "8",
                 "--max-length", "32", "--strategy", "cpu", "--seed", "0"]
    assert main(arguments) == 0
    assert "best epoch 1: accuracy" in capsys.readouterr().out
    assert (tmp_path / "run" / "best.keras").exists() and (tmp_path / "run" / "task.json").exists()
    assert (tmp_path / "run" / "tokenizer" / "tokenizer_config.json").exists()

    # The fine-tuned model exports with the tokenizer and task found beside it, and serves raw strings.
    assert main(["export", str(tmp_path / "run" / "best.keras"), "--name", "polarity", "--output-dir",
                 str(tmp_path / "saved"), "--sequence-length", "32"]) == 0
    assert "polarity/1" in capsys.readouterr().out
    import tensorflow as tf

    served = tf.saved_model.load(str(tmp_path / "saved" / "polarity" / "1")).signatures["serving_default"]
    outputs = served(text=tf.constant(["a gripping, moving film", ""]))
    assert outputs["probabilities"].shape == (2, 2) and outputs["label"].dtype == tf.string

    (tmp_path / "bad.tsv").write_text("sentence\tlabel\ngood film\tmaybe\n")
    bad = ["finetune", "--pretrained", minilm, "--train", str(tmp_path / "bad.tsv"), "--eval", str(tmp_path / "bad.tsv"),
           "--model-dir", str(tmp_path / "run2")]
    assert main(bad) == 2
    assert "bad.tsv, line 2, column 'label'" in capsys.readouterr().err
    assert main(["finetune", "--pretrained", str(tmp_path / "nothing"), "--glue", "sst2",
                 "--model-dir", str(tmp_path / "run3")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["finetune", "--pretrained", minilm, "--model-dir", str(tmp_path / "run4")]) == 2
    assert "--train and --eval" in capsys.readouterr().err
