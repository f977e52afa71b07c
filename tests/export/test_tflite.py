"""TF Lite exports (`tfbert export --format tflite`, `export_tflite`): the shared tiny models exported as TF Lite
give the records of their SavedModel exports (`exports`), through `tfbert.artifacts.open`, `SavedModelClient` and
`tfbert predict`; tasks and options a TF Lite export cannot serve, and an existing output, are refused in one line."""

import json
import sys
import types

import numpy as np
import pytest
from conftest import LABELS, PAIRS, SEQUENCE_LENGTH, TAGS, TEXTS

from tfbert import artifacts
from tfbert.cli import main
from tfbert.export.client import SavedModelClient
from tfbert.export.signatures import LoadedSavedModel

OPTIONS = {"classification": {"label_names": LABELS, "pair": True}, "embedding": {}}
EXAMPLES = {"classification": [f"{text}\t{pair}" for text, pair in zip(TEXTS, PAIRS)], "embedding": TEXTS}
VALUES = {"classification": "probabilities", "embedding": "embedding", "regression": "score"}


@pytest.fixture(scope="module")
def tflite_exports(models, tokenizer, tmp_path_factory):
    """`task -> folder`: the shared classification (pairs, three labels) and embedding models as TF Lite exports."""
    from tfbert.export import export_tflite

    root = tmp_path_factory.mktemp("tflite")
    return {task: export_tflite(models[task], task, tokenizer=tokenizer, output_dir=root,
                                sequence_length=SEQUENCE_LENGTH, **OPTIONS[task]) for task in OPTIONS}


@pytest.fixture(scope="module")
def tflite_sources(tflite_exports):
    """`task -> TFLiteExport` of each folder on one thread, loaded once."""
    from tfbert.export import TFLiteExport

    return {task: TFLiteExport(folder, threads=1) for task, folder in tflite_exports.items()}


def _values(records: list[dict], task: str) -> np.ndarray:
    values = [record[VALUES[task]] for record in records]
    return np.array([list(value.values()) if isinstance(value, dict) else value for value in values])


def _saved_model_records(loaded, task: str, examples: list[str]) -> list[dict]:
    """The records of the session's SavedModel export of `task` (loaded once: `loaded`)."""
    return SavedModelClient(LoadedSavedModel(loaded[task]))(examples, batch_size=3)


def _same_records(ours: list[dict], theirs: list[dict], task: str) -> None:
    """The records of a TF Lite export equal its SavedModel's: every field, the numbers within 1e-5."""
    np.testing.assert_allclose(_values(ours, task), _values(theirs, task), atol=1e-5)
    strip = VALUES[task]
    assert [{k: v for k, v in record.items() if k != strip} for record in ours] == \
        [{k: v for k, v in record.items() if k != strip} for record in theirs]


@pytest.mark.parametrize("task", sorted(OPTIONS))
def test_a_tflite_export_predicts_what_the_saved_model_does(task, tflite_exports, tflite_sources, loaded):
    folder = tflite_exports[task]
    artifact = artifacts.open(folder)
    assert (artifact.kind, artifact.source_format, artifact.task["task"]) == ("tflite-export", "tflite", task)
    assert artifact.preprocessor.sequence_length == SEQUENCE_LENGTH
    assert sorted(entry.name for entry in folder.iterdir()) == [
        "model.tflite", "preprocessor.json", "tfbert.json", "tfbert_export.json", "tokenizer"]
    client = SavedModelClient(tflite_sources[task])
    assert (client.task, client.input_names) == (task, ("text", "text_pair") if task == "classification" else ("text",))
    # batches of 3 and 1: shapes change between calls, and one row is cut to its own length
    ours = client(EXAMPLES[task], batch_size=3)
    _same_records(ours, _saved_model_records(loaded, task, EXAMPLES[task]), task)
    if task == "classification":
        assert [list(record["probabilities"]) for record in ours] == [LABELS] * len(TEXTS)


def test_the_interpreter_runs_the_ids_the_export_packs(tflite_sources, loaded):
    """`model.tflite` itself: int32 ids in, the SavedModel's numeric outputs under their names."""
    import tensorflow as tf

    source = tflite_sources["classification"]
    packed = source.encode({"text": TEXTS[:2], "text_pair": PAIRS[:2]})
    assert packed["token_ids"].shape[1] == packed["padding_mask"].sum(axis=1).max() < SEQUENCE_LENGTH
    outputs = source.run(packed)
    assert sorted(outputs) == ["label_id", "logits", "probabilities"]
    assert outputs["logits"].dtype == np.float32 and outputs["label_id"].dtype == np.int32
    served = loaded["classification"].signatures["serving_default"](
        text=tf.constant(TEXTS[:2]), text_pair=tf.constant(PAIRS[:2]))
    np.testing.assert_allclose(outputs["logits"], served["logits"], atol=1e-5)
    np.testing.assert_array_equal(outputs["label_id"], served["label_id"])


def test_export_and_predict_commands_on_a_keras_file(models, exports, loaded, tmp_path, capfd):
    """`tfbert export model.keras --format tflite`, then `tfbert predict FOLDER --json`: the SavedModel's records,
    and nothing on stderr (not TF Lite's XNNPACK notice either); the same command again is refused, the folder
    kept as it was."""
    model_file = tmp_path / "regressor.keras"
    models["regression"].save(model_file)
    tokenizer = exports["regression"] / "assets.extra" / "tokenizer"
    command = ["export", str(model_file), "--name", "sts", "--output-dir", str(tmp_path / "lite"), "--tokenizer",
               str(tokenizer), "--sequence-length", str(SEQUENCE_LENGTH), "--format", "tflite"]
    assert main(command) == 0
    folder = tmp_path / "lite" / "sts"
    assert capfd.readouterr().out.strip().endswith(f"wrote {folder}")
    assert main(["predict", str(folder), "--json", "--threads", "1", *TEXTS]) == 0
    printed = capfd.readouterr()
    assert printed.err == ""
    records = [json.loads(line) for line in printed.out.splitlines()]
    _same_records(records, _saved_model_records(loaded, "regression", TEXTS), "regression")

    written = (folder / "model.tflite").stat().st_mtime_ns
    assert main(command) == 2
    error = capfd.readouterr().err.strip()
    assert error.startswith("tfbert export: error: --name ") and "already exists" in error and "--overwrite" in error
    assert len(error.splitlines()) == 1 and (folder / "model.tflite").stat().st_mtime_ns == written


def test_loading_an_export_again_and_again_warns_of_no_retracing(tflite_exports, caplog, capfd):
    """A process that loads exports one after another (a server, a notebook, `predict` in a loop) stays quiet."""
    from tfbert.export import TFLiteExport

    for _ in range(8):
        export = TFLiteExport(tflite_exports["classification"], threads=1)
        export.encode({name: TEXTS[:2] for name in export.input_names})
    assert not [record for record in caplog.records if "retracing" in record.getMessage()]
    assert "retracing" not in capfd.readouterr().err


def test_tasks_and_options_a_tflite_export_cannot_serve_are_refused(models, tokenizer, exports, tmp_path, capsys):
    from tfbert.export import export_tflite

    with pytest.raises(ValueError, match="a tagging model does not export to TF Lite, which serves classification, "
                                         "regression, embedding models; export it as a SavedModel"):
        export_tflite(models["tagging"], "tags", tokenizer=tokenizer, output_dir=tmp_path, label_names=TAGS)
    assert not (tmp_path / "tags").exists()
    with pytest.raises(ValueError, match="already an export"):
        export_tflite(exports["embedding"], "again", output_dir=tmp_path)

    assert main(["export", str(exports["embedding"]), "--name", "x", "--format", "tflite", "--hub-pair",
                 "--version", "2"]) == 2
    assert capsys.readouterr().err.strip() == (
        "tfbert export: error: --version, --hub-pair: not for --format tflite (a TF Lite export is one folder, "
        "OUTPUT_DIR/NAME, serving classification, regression or embeddings); leave them out")
    assert main(["predict", str(exports["embedding"]), "--threads", "2", "hello"]) == 2
    assert "only a TF Lite export's interpreter takes a thread count" in capsys.readouterr().err


def test_threads_beyond_the_cores_are_capped_with_a_note(tflite_exports, capsys):
    """100,000 interpreter threads aborted the process (`pthread_create failed`); 4,096 started on 2 cores."""
    import os

    from tfbert.export import TFLiteExport

    cores = len(os.sched_getaffinity(0))
    source = TFLiteExport(tflite_exports["embedding"], threads=100_000)
    assert source.threads == cores and source.threads_note == (
        f"threads 100000 is more than the {cores} cores this process may run on: the interpreter runs on {cores}")
    assert TFLiteExport(tflite_exports["embedding"], threads=1).threads_note is None
    assert main(["predict", str(tflite_exports["embedding"]), "--threads", "4096", "hello"]) == 0
    printed = capsys.readouterr()
    assert printed.err.strip() == (f"note: --threads 4096 is more than the {cores} cores this process may run on: "
                                   f"the interpreter runs on {cores}")
    assert "embedding of" in printed.out


def test_litert_runs_the_export_where_it_is_installed(monkeypatch):
    """`ai_edge_litert` (LiteRT), where importable, gives the interpreter; TensorFlow's is the fallback."""
    from tfbert.export.tflite_model import new_interpreter

    created = []
    litert = types.ModuleType("ai_edge_litert.interpreter")
    litert.Interpreter = lambda **options: created.append(options) or "a LiteRT interpreter"
    monkeypatch.setitem(sys.modules, "ai_edge_litert", types.ModuleType("ai_edge_litert"))
    monkeypatch.setitem(sys.modules, "ai_edge_litert.interpreter", litert)
    assert new_interpreter("model.tflite", 3) == "a LiteRT interpreter"
    assert created == [{"model_path": "model.tflite", "num_threads": 3}]


def test_a_conversion_failure_names_the_ops_and_their_layers_in_one_line():
    """The converter's MLIR error (many lines, one per op it cannot express) becomes the ops and their layers."""
    from tfbert.export.tflite import _first_line

    def failed(op: str, path: str) -> str:
        return (f'loc(callsite(fused["{op}:", "sentence_embedder/encoder/{path}/{op.lower()}_4@__inference_serving_3"]'
                f' at fused["StatefulPartitionedCall:", "StatefulPartitionedCall"])): error: \'tf.{op}\' op is '
                "neither a custom op nor a flex op\n<unknown>:0: note: called from\n")
    message = ("Could not translate MLIR to FlatBuffer.<unknown>:0: error: " + failed("StridedSlice", "relative")
               + failed("StridedSlice", "layer0_attention") + failed("Einsum", "layer0_attention")
               + "error: failed while converting: 'main'")
    assert _first_line(Exception(message)) == \
        "tf.Einsum in encoder/layer0_attention; tf.StridedSlice in encoder/layer0_attention, encoder/relative"
    assert _first_line(Exception("the converter's own error\nits details")) == "the converter's own error"


def test_dynamic_quantization_stores_int8_weights_and_keeps_the_embeddings(models, tokenizer, tflite_exports,
                                                                         tflite_sources, tmp_path, capsys):
    """`quantize="dynamic"`: a smaller file that says so, and embeddings close to the float32 export's (a cosine
    of at least 0.99 on the shared texts); `--quantize` without `--format tflite` is refused in one line."""
    from tfbert.export import TFLiteExport, export_tflite

    folder = export_tflite(models["embedding"], "int8", tokenizer=tokenizer, output_dir=tmp_path,
                           sequence_length=SEQUENCE_LENGTH, quantize="dynamic")
    assert json.loads((folder / "tfbert_export.json").read_text())["quantization"] == "dynamic"
    assert json.loads((tflite_exports["embedding"] / "tfbert_export.json").read_text())["quantization"] is None
    float32_size = (tflite_exports["embedding"] / "model.tflite").stat().st_size
    assert (folder / "model.tflite").stat().st_size < 0.5 * float32_size
    ours = TFLiteExport(folder, threads=1)({"text": TEXTS})["embedding"]
    theirs = tflite_sources["embedding"]({"text": TEXTS})["embedding"]
    cosines = np.sum(ours * theirs, axis=1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    assert cosines.min() > 0.99 and np.abs(ours - theirs).max() > 0, "int8 weights move the outputs a little"

    with pytest.raises(ValueError, match="quantize 'int4': give one of dynamic, or None for float32 weights"):
        export_tflite(models["embedding"], "int4", tokenizer=tokenizer, output_dir=tmp_path, quantize="int4")
    assert main(["export", str(folder), "--name", "x", "--quantize", "dynamic"]) == 2
    assert capsys.readouterr().err.strip() == (
        "tfbert export: error: --quantize is for --format tflite (a SavedModel keeps float32 weights); add "
        "--format tflite or leave --quantize out")
