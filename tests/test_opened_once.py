"""A command opens its source once (`tfbert.artifacts.open`) and hands the opened `Artifact` down: counted here
on a fine-tune (classification and embedding) and an export of a tiny encoder (`tiny_folders`)."""

from pathlib import Path

import pytest
from tiny_folders import TRAINING, WORDS, tiny_folders

from tfbert import artifacts
from tfbert.cli import main


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    return tiny_folders(tmp_path_factory)


@pytest.fixture
def opens(monkeypatch) -> list[Path]:
    """The paths `tfbert.artifacts.open` is called with, however a module reaches it."""
    calls, real = [], artifacts.reader.open

    def counted(path):
        calls.append(Path(path))
        return real(path)

    monkeypatch.setattr(artifacts, "open", counted)
    monkeypatch.setattr(artifacts.reader, "open", counted)
    return calls


def test_a_classification_finetune_and_its_export_open_their_source_once(folders, opens, tmp_path):
    pretrained, train = folders["pre"], str(folders["train.tsv"])
    assert main(["finetune", "--pretrained", str(pretrained), "--train", train, "--eval", train, "--model-dir",
                 str(tmp_path / "cls"), "--max-length", "8", *TRAINING]) == 0
    assert opens == [pretrained]
    manifest = artifacts.read_manifest(tmp_path / "cls")
    assert manifest["provenance"]["source"] == str(pretrained) and manifest["preprocessor"]["sequence_length"] == 8

    opens.clear()
    assert main(["export", str(tmp_path / "cls"), "--name", "cls", "--output-dir", str(tmp_path / "saved")]) == 0
    assert opens == [tmp_path / "cls"]
    assert artifacts.open(tmp_path / "saved" / "cls").manifest["provenance"]["source"] == str(tmp_path / "cls")


def test_an_embedding_finetune_opens_its_pretrained_model_once(folders, opens, tmp_path):
    pretrained = folders["pre"]
    pairs = [f"{a} film\t{b} plot\t{4.5 if (a in WORDS[:3]) == (b in WORDS[:3]) else 0.5}"
             for a in WORDS for b in WORDS]
    (tmp_path / "pairs.tsv").write_text("\n".join(pairs) + "\n")
    assert main(["finetune", "--task", "embedding", "--pretrained", str(pretrained), "--train",
                 str(tmp_path / "pairs.tsv"), "--eval", str(tmp_path / "pairs.tsv"), "--format", "pairs",
                 "--model-dir", str(tmp_path / "emb"), "--max-length", "8", *TRAINING]) == 0
    assert opens.count(pretrained) == 1
    assert artifacts.read_manifest(tmp_path / "emb")["provenance"]["source"] == str(pretrained)
