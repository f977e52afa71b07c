"""The `tfbert` command line: main paths and bad input."""

import logging

import keras
import pytest

from tfbert.cli import main

pytestmark = pytest.mark.end_to_end

# Each subcommand and options its --help must explain.
HELP = {
    "configs": ["tfbert configs"],
    "vocab": ["--kind", "--data", "--vocab-size", "--output", "sentencepiece", "vocab add", "vocab stats", "--pre-tokenize"],
    "pretrain": ["--config", "--tokenizer", "--data", "--model-dir", "--steps", "--strategy", "resumes"],
    "finetune": ["--pretrained", "--train", "--eval", "--glue", "--task", "--model-dir", "best.keras", "embedding",
                 "--loss", "multiple-negatives", "--score-range"],
    "export": ["--name", "--tokenizer", "--labels", "--pair", "--output-dir", "--hub-pair", "TF Serving"],
    "predict": ["--file", "--top-k", "--json", "--output", "--question", "--text-pair", "--signature", "stdin"],
    "info": ["versions", "strategy"],
    "evaluate": ["sts", "--data", "--cross-encoder", "--json", "Pearson", "Spearman", "SavedModel"],
    "distill": ["--teacher", "--student", "--parallel", "--eval", "--model-dir", "translation", "--max-length"],
    "augment": ["--cross-encoder", "--sentences", "--pairs", "bm25", "embedding-neighbours", "--output", "--bi-encoder"],
    "convert": ["huggingface", "tf1", "keras-hub", "--output", "--heads", "--cased", "--uncased", "tokenizer/"],
}


@pytest.mark.parametrize("command", sorted(HELP))
def test_every_subcommand_has_help_with_examples(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert out.startswith(f"usage: tfbert {command}") and f"examples:\n  tfbert {command}" in out
    for word in HELP[command]:
        assert word in out, f"{command} --help lacks {word}"


def test_top_level_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and all(f"    {command}" in out for command in HELP)


def test_info_prints_versions_devices_and_strategy(capsys):
    import tensorflow as tf

    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tfbert 0.") and f"TensorFlow {tf.__version__}" in out and "TF-Text" in out
    assert "\nCPU: " in out and "\nstrategy auto: " in out
    assert "matmul peak (stated by TFBERT_MATMUL_PEAKS, not measured): float32 100.0 GFLOP/s" in out
    assert "CPU bfloat16 instructions: " in out
    assert "\n--precision auto: float32 (no bfloat16 instructions on this CPU (no AVX512-BF16, no AMX; stated by " \
           "TFBERT_CPU_BF16))\n" in out
    with pytest.raises(SystemExit) as exit_info:
        main(["info", "--gpus"])
    assert exit_info.value.code == 2 and "unrecognized arguments: --gpus" in capsys.readouterr().err


def _one_line_error(capsys, command: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"tfbert {command}: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


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
    assert (tmp_path / "tokenizer" / "vocab.txt").is_file()  # the folder's Hugging Face tokenizer, as tfbert's


def test_convert_bad_input_exits_2_with_a_message(tmp_path, capsys):
    assert main(["convert", "huggingface", str(tmp_path), "-o", str(tmp_path / "x.keras")]) == 2
    assert "config.json" in capsys.readouterr().err
    assert main(["convert", "huggingface", str(tmp_path), "-o", str(tmp_path / "x.h5")]) == 2
    assert "must end with .keras" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", "onnx", str(tmp_path), "-o", "x.keras"])
    assert exit_info.value.code == 2


def test_vocab_then_pretrain_on_real_text(assets, tmp_path, capsys, caplog):
    caplog.set_level(logging.INFO, logger="tfbert.training.driver")
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
                 "--sequence-length", "32", "--max-predictions", "5", "--checkpoint-every", "2", "--shuffle-buffer", "50",
                 "--jit-compile", "on"]   # auto would not compile two steps on a CPU; the CLI's XLA path is tested here
    assert main(arguments) == 0
    assert "jit_compile=True" in caplog.text
    out = capsys.readouterr().out
    assert "trained to step 2 of 2" in out
    expected = "no bfloat16 instructions on this CPU (no AVX512-BF16, no AMX; stated by TFBERT_CPU_BF16)"
    assert f"precision: float32 ({expected})\n" in out   # tests/conftest.py states the CPU's instructions
    assert (tmp_path / "run" / "encoder" / "encoder.keras").exists()


def test_pretrain_and_vocab_bad_input(tmp_path, capsys):
    data = tmp_path / "x.txt"
    data.write_text("a sentence\n")
    assert main(["vocab", "--kind", "wordpiece", "--data", str(tmp_path / "none.txt"), "--vocab-size", "100",
                 "--output", str(tmp_path / "v")]) == 2
    assert "none.txt" in capsys.readouterr().err
    assert main(["pretrain", "--config", "bert_gigantic", "--tokenizer", str(tmp_path), "--data", str(data),
                 "--model-dir", str(tmp_path / "run"), "--steps", "1"]) == 2
    assert "unknown config 'bert_gigantic'" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("architecture: bert\nencoder: {vocab_size: [\n")
    assert main(["pretrain", "--config", str(bad), "--tokenizer", str(tmp_path), "--data", str(data),
                 "--model-dir", str(tmp_path / "run"), "--steps", "1"]) == 2
    assert "not valid YAML" in capsys.readouterr().err
    assert main(["pretrain", "--config", "bert_tiny", "--tokenizer", str(tmp_path / "no_tokenizer"),
                 "--data", str(data), "--model-dir", str(tmp_path / "run"), "--steps", "1"]) == 2
    assert "tokenizer" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["pretrain", "--config", "bert_tiny", "--tokenizer", str(tmp_path), "--data", str(data),
              "--model-dir", str(tmp_path / "run"), "--steps", "1", "--shuffle-buffer", "-1"])
    assert "argument --shuffle-buffer: -1 is out of range; give 0 or more" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_bad_input_messages_are_one_line(assets, tmp_path, capsys):
    """Multi-line library errors (PyYAML's, TFDS's, SentencePiece's) come out as one line, exit status 2."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("architecture: bert\nencoder: {vocab_size: [\n")
    common = ["--tokenizer", str(tmp_path), "--data", "x.txt", "--steps", "1"]
    assert main(["pretrain", "--config", str(bad), "--model-dir", str(tmp_path / "run"), *common]) == 2
    assert "is not valid YAML: while parsing a flow node: expected the node content, but found '<stream end>' " \
           "at line 3, column 1" in _one_line_error(capsys, "pretrain")
    (tmp_path / "a_file").write_text("x")
    assert main(["pretrain", "--config", "bert_tiny", "--model-dir", str(tmp_path / "a_file"), *common]) == 2
    assert f"--model-dir '{tmp_path / 'a_file'}' is a file" in _one_line_error(capsys, "pretrain")

    vocab_dir = tmp_path / "vocab"
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world\nthe cat sat on the mat\n")
    assert main(["vocab", "--kind", "wordpiece", "--data", str(corpus), "--vocab-size", "32",
                 "--output", str(vocab_dir)]) == 0
    capsys.readouterr()
    assert main(["pretrain", "--config", "bert_tiny", "--tokenizer", str(vocab_dir), "--data", "tfds:no_such_dataset",
                 "--model-dir", str(tmp_path / "run"), "--steps", "1"]) == 2
    assert "TensorFlow Datasets has no dataset 'no_such_dataset'" in _one_line_error(capsys, "pretrain")

    vocab = ["vocab", "--data", str(corpus), "--output"]
    assert main([*vocab, str(tmp_path / "v"), "--kind", "sentencepiece", "--vocab-size", "5"]) == 2
    assert "vocab size 5 is smaller than the 19 characters and special tokens this corpus needs; give at least 19" \
        in _one_line_error(capsys, "vocab")
    with pytest.raises(SystemExit):
        main([*vocab, str(tmp_path / "v"), "--kind", "wordpiece", "--vocab-size", "0"])
    assert "argument --vocab-size: 0 is out of range" in _one_line_error(capsys, "vocab")
    assert main([*vocab, str(corpus), "--kind", "wordpiece", "--vocab-size", "100"]) == 2
    assert "already exists (a file); nothing was changed" in _one_line_error(capsys, "vocab")
    assert main([*vocab, str(tmp_path / "v"), "--kind", "byte_bpe", "--vocab-size", "3"]) == 2
    assert "vocab_size 3 is smaller than the 261 special and byte tokens" in _one_line_error(capsys, "vocab")


def test_finetune_unknown_task_and_unreachable_glue(assets, tmp_path, capsys, monkeypatch):
    minilm = str(assets("minilm/config.json").parent)
    with pytest.raises(SystemExit) as exit_info:
        main(["finetune", "--pretrained", minilm, "--train", "a.tsv", "--eval", "b.tsv", "--task", "ner",
              "--model-dir", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "argument --task: invalid choice: 'ner' (choose from" in capsys.readouterr().err
    assert main(["finetune", "--pretrained", minilm, "--glue", "sst3", "--model-dir", str(tmp_path)]) == 2
    assert "unknown GLUE task 'sst3'; choose from cola, sst2" in _one_line_error(capsys, "finetune")
    assert main(["finetune", "--pretrained", minilm, "--train", str(tmp_path / "none.tsv"), "--eval",
                 str(tmp_path / "none.tsv"), "--model-dir", str(tmp_path / "run")]) == 2
    assert "none.tsv: no such data file" in _one_line_error(capsys, "finetune")

    import requests
    import tensorflow_datasets as tfds

    def offline(*args, **kwargs):
        raise requests.exceptions.ConnectionError("Failed to resolve 'dl.fbaipublicfiles.com'")

    monkeypatch.setattr(tfds, "load", offline)
    assert main(["finetune", "--pretrained", minilm, "--glue", "sst2", "--model-dir", str(tmp_path / "run")]) == 2
    err = _one_line_error(capsys, "finetune")
    assert "cannot load glue/sst2 from TensorFlow Datasets (ConnectionError: Failed to resolve" in err
    assert "needs the internet" in err


def test_configs_takes_no_arguments(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["configs", "bert_base"])
    assert exit_info.value.code == 2 and "unrecognized arguments: bert_base" in capsys.readouterr().err


def test_finetune_classification_from_files_then_errors(assets, tmp_path, capsys):
    """Pang & Lee sentences in a TSV, fine-tuned from the real MiniLM checkpoint (its vocab.txt is the tokenizer)."""
    rows = [line.split(" ", 1) for line in assets("labelled/pang_lee_polarity.cor").read_text(encoding="cp1252", errors="replace").splitlines()]
    lines = [f"{text.strip()}\t{'1' if tag.endswith('pos') else '0'}" for tag, text in rows]   # 100 neg, then 100 pos
    (tmp_path / "train.tsv").write_text("\n".join(["sentence\tlabel"] + lines[:20] + lines[100:120]) + "\n")
    (tmp_path / "dev.tsv").write_text("\n".join(["sentence\tlabel"] + lines[20:30] + lines[120:130]) + "\n")
    minilm = str(assets("minilm/config.json").parent)
    arguments = ["finetune", "--pretrained", minilm, "--train", str(tmp_path / "train.tsv"), "--eval",
                 str(tmp_path / "dev.tsv"), "--model-dir", str(tmp_path / "run"), "--epochs", "1", "--batch-size", "8",
                 "--max-length", "32", "--strategy", "cpu", "--seed", "0", "--precision", "fp32"]
    assert main(arguments) == 0
    out = capsys.readouterr().out
    assert "best epoch 1: accuracy" in out and "precision: float32 (requested)\n" in out
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
