"""Folders tfbert's own commands write from a tiny encoder, made once per test run (`built_once`) for the tests
that read them back: `pre/` (an `encoder.keras` and its `tokenizer/`), `cls/` (a model dir fine-tuned from it),
`tflite/cls/` (its TF Lite export), `hf/` (its Hugging Face folder, the tokenizer in `tokenizer.json` only) and
`run/config.yaml`, with `train.tsv` and `corpus.txt`.

Example:
    >>> @pytest.fixture(scope="module")
    ... def folders(tmp_path_factory):
    ...     return tiny_folders(tmp_path_factory)
"""

import contextlib
import io
from pathlib import Path

import pytest
from built_once import built_once

from tfbert.cli import main

WORDS = ["good", "bad", "film", "plot", "great", "awful", "fine", "dull"]
TRAINING = ["--strategy", "cpu", "--seed", "0", "--precision", "fp32", "--epochs", "1", "--batch-size", "4"]


def build_folders(root: Path) -> dict[str, str]:
    """A tiny encoder and its tokenizer (`pre/`), a model dir fine-tuned from it (`cls/`), its TF Lite export
    (`tflite/cls/`), its Hugging Face folder (`hf/`, tokenizer.json only) and a run config (`run/config.yaml`)."""
    import keras

    from tfbert.config import EncoderConfig, ModelConfig, save_config
    from tfbert.models.encoder import Encoder
    from tfbert.text import WordPieceTokenizer

    (root / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = WordPieceTokenizer(root / "vocab.txt")
    keras.utils.set_random_seed(0)
    config = EncoderConfig(vocab_size=tokenizer.vocabulary_size(), hidden_size=16, num_layers=1, num_heads=2,
                           intermediate_size=32, max_positions=32)
    (root / "pre").mkdir()
    Encoder(config, name="encoder", architecture="bert").save(root / "pre" / "encoder.keras")
    tokenizer.save_assets(root / "pre" / "tokenizer")
    rows = [f"{a} {b}\t{int(a in ('good', 'great', 'fine'))}" for a in WORDS for b in ("film", "plot")]
    (root / "train.tsv").write_text("sentence\tlabel\n" + "\n".join(rows) + "\n")
    (root / "corpus.txt").write_text("\n".join(f"{a} {b} film" for a in WORDS for b in WORDS) + "\n")
    commands = [["finetune", "--pretrained", str(root / "pre"), "--train", str(root / "train.tsv"), "--eval",
                 str(root / "train.tsv"), "--model-dir", str(root / "cls"), "--max-length", "8", "--label-names",
                 "neg", "pos", *TRAINING],
                ["export", str(root / "cls"), "--name", "cls", "--output-dir", str(root / "tflite"), "--format",
                 "tflite"],
                ["convert", "to-huggingface", str(root / "cls"), "-o", str(root / "hf")]]
    for command in commands:
        assert main(command) == 0, command
    (root / "hf" / "vocab.txt").unlink()   # so that its tokenizer is read from tokenizer.json
    (root / "run").mkdir()
    save_config(ModelConfig(architecture="bert", encoder=config), root / "run" / "config.yaml")
    return {name: str(root / name) for name in ("pre", "cls", "tflite", "hf", "run", "train.tsv", "corpus.txt")}


_BUILT: dict[str, dict[str, str]] = {}


def tiny_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`build_folders`' paths, built once per test run and worker (and shared by the xdist workers)."""
    key = str(tmp_path_factory.getbasetemp())
    if key not in _BUILT:
        _BUILT[key] = built_once(tmp_path_factory, "tiny-folders", build_folders)
    return {name: Path(path) for name, path in _BUILT[key].items()}


def run_cli(argv: list[str]) -> tuple[int, str]:
    """`tfbert ARGV` in this process: its exit status and what it wrote to stderr."""
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exit_info:
            code = exit_info.code
    return code, errors.getvalue()
