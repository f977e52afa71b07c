"""`tfbert export` (tfbert.commands.export) from files: a task model's .keras, a pretraining run folder; bad input."""

import argparse
import json

import pytest
import tensorflow as tf

from tfbert.cli import CommandError
from tfbert.commands.export import add_parser

pytestmark = pytest.mark.end_to_end


def _parse(*argv):
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["export", *argv])


def test_keras_file_with_tokenizer_beside(models, tokenizer, tmp_path):
    models["classification"].save(tmp_path / "best.keras")
    tokenizer.save_assets(tmp_path / "tokenizer")
    args = _parse(str(tmp_path / "best.keras"), "--name", "nli", "--output-dir", str(tmp_path / "out"), "--pair",
                  "--labels", "entailment,neutral,contradiction", "--sequence-length", "16")
    args.run(args)
    metadata = json.loads((tmp_path / "out" / "nli" / "1" / "assets.extra" / "tfbert_export.json").read_text())
    assert metadata["label_names"] == ["entailment", "neutral", "contradiction"] and metadata["task"] == "classification"
    served = tf.saved_model.load(str(tmp_path / "out" / "nli" / "1")).signatures["serving_default"]
    assert served(text=tf.constant(["a"]), text_pair=tf.constant(["b"]))["label"].shape == (1,)


@pytest.mark.slow
def test_pretraining_run_folder(models, tiny_config, tokenizer, tmp_path):
    from tfbert.training.run_assets import save_run_assets

    model = models["fill_mask"]
    save_run_assets(tiny_config, tokenizer, str(tmp_path / "run"))
    tf.train.CheckpointManager(tf.train.Checkpoint(model=model), str(tmp_path / "run"), 1,
                               checkpoint_name="ckpt").save(checkpoint_number=10)
    args = _parse(str(tmp_path / "run"), "--name", "mlm", "--output-dir", str(tmp_path / "out"), "--sequence-length",
                  "16", "--top-k", "3")
    args.run(args)
    served = tf.saved_model.load(str(tmp_path / "out" / "mlm" / "1")).signatures["serving_default"]
    outputs = served(text=tf.constant(["the [MASK] sat."]))
    assert outputs["token_ids"].shape == (1, 4, 3)


@pytest.mark.parametrize("argv, message", [
    (["missing.keras", "--name", "x"], "does not exist"),
    (["{tmp}", "--name", "x"], "is none of the kinds tfbert reads"),
])
def test_bad_input(argv, message, tmp_path):
    args = _parse(*[arg.format(tmp=tmp_path / "empty") for arg in argv])
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match=message):
        args.run(args)


def test_wrong_labels_or_a_broken_keras_file(models, tokenizer, tmp_path):
    models["classification"].save(tmp_path / "best.keras")
    tokenizer.save_assets(tmp_path / "tokenizer")
    args = _parse(str(tmp_path / "best.keras"), "--name", "x", "--output-dir", str(tmp_path / "out"),
                  "--labels", "negative,positive", "--sequence-length", "16")
    with pytest.raises(CommandError, match="2 label names for 3 classes"):
        args.run(args)
    (tmp_path / "broken.keras").write_text("not a zip archive")
    args = _parse(str(tmp_path / "broken.keras"), "--name", "x", "--output-dir", str(tmp_path / "out"))
    with pytest.raises(CommandError, match="is not a .keras file"):
        args.run(args)


def test_a_hugging_face_folder_gives_its_vocab_txt_tokenizer(assets):
    """Its tokenizer_config.json is Hugging Face's (do_lower_case, no tfbert class): read vocab.txt beside it."""
    from tfbert.export.sources import resolve_source
    from tfbert.text import WordPieceTokenizer

    tokenizer = resolve_source(assets("minilm/vocab.txt").parent).tokenizer
    assert isinstance(tokenizer, WordPieceTokenizer) and tokenizer.vocabulary_size() == 30522
    assert tokenizer.lowercase


def test_precision_bf16_export_serves_float32_embeddings_close_to_the_fp32_export(models, tokenizer, tmp_path, capsys):
    import keras
    import numpy as np

    models["embedding"].save(tmp_path / "embedder.keras")
    tokenizer.save_assets(tmp_path / "tokenizer")
    texts = tf.constant(["Ada Lovelace wrote the first program.", "hello world"])
    served = {}
    try:
        for precision in ("fp32", "bf16"):
            args = _parse(str(tmp_path / "embedder.keras"), "--name", precision, "--output-dir", str(tmp_path / "out"),
                          "--sequence-length", "16", "--precision", precision)
            args.run(args)
            signature = tf.saved_model.load(str(tmp_path / "out" / precision / "1")).signatures["serving_default"]
            served[precision] = signature(text=texts)["embedding"]
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert "precision: mixed_bfloat16 (requested)" in capsys.readouterr().out
    assert served["bf16"].dtype == tf.float32 and _parse("x", "--name", "y").precision == "fp32"
    fp32, bf16 = served["fp32"].numpy(), served["bf16"].numpy()
    cosine = np.sum(fp32 * bf16, -1) / np.linalg.norm(fp32, axis=-1) / np.linalg.norm(bf16, axis=-1)
    assert not np.array_equal(fp32, bf16) and cosine.min() >= 0.999
