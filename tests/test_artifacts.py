"""`tfbert.artifacts`: the manifest, the sentence-transformers layout, pooling as sentence-transformers
computes it, and `open` on folders written before the manifest (the commands' chains: `test_chains.py`)."""

import json

import numpy as np
import pytest

from tfbert import artifacts
from tfbert.artifacts.sentence_transformers import (SentenceTransformersLayout, read_sentence_transformers,
                                                    write_sentence_transformers)


def test_manifest_round_trip_is_atomic_and_versioned(tmp_path):
    path = artifacts.write_manifest(tmp_path, "model-dir", family="roberta", task={"labels": ["no", "yes"]},
                                    source="runs/base", step=7)
    manifest = artifacts.read_manifest(tmp_path)
    assert path.name == "tfbert.json" and [p.name for p in tmp_path.iterdir()] == ["tfbert.json"]
    assert (manifest["kind"], manifest["family"], manifest["task"]["labels"]) == ("model-dir", "roberta", ["no", "yes"])
    assert manifest["provenance"]["source"] == "runs/base" and manifest["provenance"]["step"] == 7
    path.write_text(json.dumps({**manifest, "format_version": 99}))
    with pytest.raises(ValueError, match="newer than this tfbert reads"):
        artifacts.read_manifest(tmp_path)
    with pytest.raises(ValueError, match="unknown artifact kind"):
        artifacts.write_manifest(tmp_path, "checkpoint")


def test_a_runs_step_is_recorded_and_its_source_kept(tmp_path):
    class Source:   # what source_fields reads of an Artifact
        path, kind, step = tmp_path / "base", "pretraining-run", 40

    artifacts.write_manifest(tmp_path, "pretraining-run", family="bert", **artifacts.source_fields(Source()))
    artifacts.record_step(tmp_path, 42)
    provenance = artifacts.read_manifest(tmp_path)["provenance"]
    assert (provenance["source"], provenance["source_kind"], provenance["source_step"], provenance["step"]) == (
        str(tmp_path / "base"), "pretraining-run", 40, 42)
    assert artifacts.record_step("gs://bucket/run", 42) is None and artifacts.record_step(tmp_path / "none", 1) is None
    assert artifacts.source_fields(None) == {"source": None, "source_kind": None, "source_step": None}


def test_an_export_resolves_to_its_highest_complete_version(tmp_path):
    for name in ("1", "2", "10", ".10-partial", "11"):   # 11: a version folder with no SavedModel in it
        (tmp_path / name).mkdir()
    for name in ("1", "2", ".10-partial"):
        (tmp_path / name / "saved_model.pb").write_bytes(b"")
    (tmp_path / "10" / "saved_model.pbtxt").write_text("")
    assert artifacts.resolve_saved_model(tmp_path) == tmp_path / "10"   # 10 > 2 as numbers, not as text
    assert artifacts.resolve_saved_model(tmp_path / "2") == tmp_path / "2"
    assert [path.name for path in artifacts.saved_model_versions(tmp_path)] == ["1", "2", "10"]
    from tfbert.export.saved_model import next_version

    assert next_version(tmp_path) == 12 and next_version(tmp_path / "missing") == 1   # 11 is never reused
    with pytest.raises(ValueError, match="is not a SavedModel .*saved_models/NAME/VERSION or saved_models/NAME"):
        artifacts.resolve_saved_model(tmp_path / "11")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        artifacts.resolve_saved_model(tmp_path / "missing")


@pytest.mark.parametrize("pooling", ["cls", "mean", "max", "mean_sqrt_len_tokens", "weightedmean", "lasttoken"])
def test_sentence_transformers_layout_round_trip(tmp_path, pooling):
    write_sentence_transformers(tmp_path, 8, SentenceTransformersLayout(pooling, pooling == "mean", 40))
    assert read_sentence_transformers(tmp_path) == SentenceTransformersLayout(pooling, pooling == "mean", 40)


def test_newer_sentence_transformers_layout_is_read(tmp_path):
    """sentence-transformers 5+ writes `pooling_mode` and keeps the length in the tokenizer config."""
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.base.modules.transformer.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.sentence_transformer.modules.pooling.Pooling"}]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"embedding_dimension": 8, "pooling_mode": "cls"}))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 256}))
    assert read_sentence_transformers(tmp_path) == SentenceTransformersLayout("cls", False, 256)


@pytest.mark.parametrize("mode", ["cls", "mean", "max", "mean_sqrt_len_tokens", "weightedmean", "lasttoken"])
def test_pooling_equals_sentence_transformers(mode):
    import torch
    from sentence_transformers.models import Pooling as TorchPooling

    from tfbert.models.tasks.layers import Pooling

    rng = np.random.default_rng(0)
    tokens = rng.normal(size=(3, 7, 8)).astype("float32")
    mask = np.array([[1] * 7, [1] * 4 + [0] * 3, [1] * 2 + [0] * 5], "int32")
    theirs = TorchPooling(8, mode)({"token_embeddings": torch.tensor(tokens),
                                     "attention_mask": torch.tensor(mask)})["sentence_embedding"].numpy()
    np.testing.assert_allclose(np.asarray(Pooling(mode)(tokens, mask)), theirs, atol=1e-5)


def test_folders_written_before_the_manifest_open(tmp_path):
    from tfbert.config import EncoderConfig
    from tfbert.models.encoder import Encoder
    from tfbert.text import WordPieceTokenizer

    tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world"])
    run = tmp_path / "run"
    tokenizer.save_assets(run / "tokenizer")
    (run / "preprocessor.json").write_text(json.dumps({"architecture": "roberta", "sequence_length": 24,
                                                       "packing_style": "roberta"}))
    (run / "encoder").mkdir()
    Encoder(EncoderConfig(vocab_size=7, hidden_size=8, num_layers=1, num_heads=2, intermediate_size=8,
                          max_positions=32)).save(run / "encoder" / "encoder.keras")
    encoder = artifacts.open(run / "encoder" / "encoder.keras")
    assert (encoder.kind, encoder.family, encoder.sequence_length) == ("keras", "roberta", 24)
    assert encoder.preprocessor.packing_style == "roberta"
    assert encoder.load_encoder().architecture == "roberta"
    assert artifacts.open(run).kind == "converted-checkpoint"
    assert artifacts.open(run / "tokenizer").kind == "vocab"
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="is none of the kinds tfbert reads"):
        artifacts.open(tmp_path / "empty")
