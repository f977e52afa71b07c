"""Every file tfbert reads from a folder is checked before use: a property-based test damages each field of each file
kind tfbert writes (the manifest, `task.json`, `preprocessor.json`, `tfbert_export.json`, the tokenizer files, a
Hugging Face `config.json` and `tokenizer.json`, `config.yaml`) and runs the command that reads it, in this process
through the CLI's `main`: one line naming the file, a non-zero status, nothing written. Then the defects of issue 44
one by one (paths out of the folder, a tokenizer bigger than the model, counts that disagree, sizes past any model).

The folders are made once per test run by tfbert's own commands from a tiny encoder (`built_once`).
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiny_folders import TRAINING, run_cli, tiny_folders


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    return tiny_folders(tmp_path_factory)


def export_model_dir(folder: Path, out: Path, folders) -> list[str]:
    return ["export", str(folder), "--name", "x", "--output-dir", str(out)]


def predict_tflite(folder: Path, out: Path, folders) -> list[str]:
    return ["predict", str(folder), "good film", "--output", str(out)]


def convert_huggingface(folder: Path, out: Path, folders) -> list[str]:
    return ["convert", "huggingface", str(folder), "-o", str(out)]


def pretrain_with_config(folder: Path, out: Path, folders) -> list[str]:
    return ["pretrain", "--config", str(folder / "config.yaml"), "--tokenizer", str(folders["pre"] / "tokenizer"),
            "--data", str(folders["corpus.txt"]), "--model-dir", str(out), "--steps", "1", "--sequence-length", "32",
            "--max-predictions", "4"]


# file kind -> (the folder holding it, the file, the command that reads it, the output that command would write);
# a Hugging Face tokenizer.json is damaged only in the parts tfbert reads (its model, normalizer, pre-tokenizer and
# added tokens), as tfbert leaves the rest to the tokenizers library.
FILE_KINDS = {
    "model dir manifest": ("cls", "tfbert.json", export_model_dir, "out"),
    "task.json": ("cls", "task.json", export_model_dir, "out"),
    "model dir preprocessor.json": ("cls", "preprocessor.json", export_model_dir, "out"),
    "tfbert tokenizer_config.json": ("cls", "tokenizer/tokenizer_config.json", export_model_dir, "out"),
    "TF Lite manifest": ("tflite/cls", "tfbert.json", predict_tflite, "out.jsonl"),
    "tfbert_export.json": ("tflite/cls", "tfbert_export.json", predict_tflite, "out.jsonl"),
    "TF Lite preprocessor.json": ("tflite/cls", "preprocessor.json", predict_tflite, "out.jsonl"),
    "TF Lite tokenizer_config.json": ("tflite/cls", "tokenizer/tokenizer_config.json", predict_tflite, "out.jsonl"),
    "Hugging Face config.json": ("hf", "config.json", convert_huggingface, "out.keras"),
    "Hugging Face tokenizer.json": ("hf", "tokenizer.json", convert_huggingface, "out.keras"),
    "Hugging Face tokenizer_config.json": ("hf", "tokenizer_config.json", convert_huggingface, "out.keras"),
    "config.yaml": ("run", "config.yaml", pretrain_with_config, "out"),
}
TOKENIZER_JSON_PARTS = ("model", "normalizer", "pre_tokenizer", "added_tokens")


def leaves(node, path=()):
    """Every field of a parsed file as a key path: each mapping's keys, nested mappings' keys too."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*path, key)
            yield from leaves(value, (*path, key))


def fields_of(kind: str, data) -> list[tuple]:
    found = list(leaves(data))
    if kind == "Hugging Face tokenizer.json":
        found = [path for path in found if path[0] in TOKENIZER_JSON_PARTS]
    return found


def wrong_values(original):
    """Values of another type than `original` (or out of any range tfbert accepts for it)."""
    others = st.sampled_from([{"x": 1}, [[]], "not a number", 1.5])
    if isinstance(original, bool):
        return st.one_of(others, st.integers(2, 9), st.text(max_size=4))
    if isinstance(original, int):
        ranges = st.sampled_from([-5, 10**12]) if abs(original) < 10**6 else st.just(-5)
        return st.one_of(st.sampled_from([{"x": 1}, [[]], "not a number", 1.5, True]), st.text(max_size=4), ranges)
    if isinstance(original, float):
        return st.one_of(st.sampled_from([{"x": 1}, [[]], "not a number", True]), st.floats(-1e6, -0.5))
    if isinstance(original, str):
        return st.one_of(st.sampled_from([{"x": 1}, [[]], True]), st.integers(-10, 10), st.floats(-1, 1))
    if isinstance(original, list):
        return st.one_of(st.sampled_from([{"x": 1}, "a string", 7]), st.lists(st.integers(), min_size=1, max_size=3))
    if isinstance(original, dict):
        return st.sampled_from([[[]], "a string", 7, True])
    return st.just([[]])   # null: no field of any file kind holds a list of lists


def with_value(data, path: tuple, value):
    copy = json.loads(json.dumps(data))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return copy


def read(path: Path):
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text) if path.suffix == ".yaml" else json.loads(text)


def write(path: Path, data) -> None:
    path.write_text(yaml.safe_dump(data) if path.suffix == ".yaml" else json.dumps(data), encoding="utf-8")


def refused(kind: str, folders, damage) -> tuple[int, list[str], bool]:
    """Copies the folder of `kind`, applies `damage(file)` to its file, runs the command that reads it: the exit
    status, the stderr lines, and whether anything was written (the command's output, or a change in the copy)."""
    folder, name, command, output = FILE_KINDS[kind]
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "in"
        shutil.copytree(folders[folder.split("/")[0]], copy, symlinks=True)
        copy = copy / Path(folder).relative_to(folder.split("/")[0]) if "/" in folder else copy
        damage(copy / name)
        before = {path: path.stat().st_mtime_ns for path in copy.rglob("*")}
        code, errors = run_cli(command(copy, Path(scratch) / output, folders))
        written = (Path(scratch) / output).exists() or before != {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
        return code, errors.strip().splitlines(), written


@pytest.mark.parametrize("kind", FILE_KINDS)
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          derandomize=True)
@given(data=st.data())
def test_a_damaged_field_of_any_file_is_one_line_naming_the_file_and_writes_nothing(kind, folders, data):
    folder, name, _, _ = FILE_KINDS[kind]
    original = read(folders[folder.split("/")[0]] / Path(folder).relative_to(folder.split("/")[0]) / name)
    for path in fields_of(kind, original):
        node = original
        for key in path:
            node = node[key]
        value = data.draw(wrong_values(node), label=".".join(map(str, path)))
        code, lines, written = refused(kind, folders, lambda file: write(file, with_value(read(file), path, value)))
        assert code not in (0, None) and not written, (path, value, lines)
        assert len(lines) == 1 and Path(name).name in lines[0], (path, value, lines)


def test_a_file_that_is_not_json_or_not_an_object_is_one_line_naming_it(folders):
    for kind in ("model dir manifest", "task.json", "tfbert_export.json", "TF Lite preprocessor.json"):
        for text in ("{not json", "7", "[]", '"text"'):
            code, lines, written = refused(kind, folders, lambda file: file.write_text(text, encoding="utf-8"))
            assert code == 2 and not written and len(lines) == 1, (kind, text, lines)
            assert FILE_KINDS[kind][1].split("/")[-1] in lines[0], (kind, text, lines)


def test_a_missing_required_field_is_named(folders):
    cases = [("model dir preprocessor.json", "sequence_length"), ("model dir manifest", "format_version"),
             ("tfbert_export.json", "inputs"), ("TF Lite preprocessor.json", "packing_style")]
    for kind, field in cases:
        def drop(file, field=field):
            data = read(file)
            del data[field]
            write(file, data)
        code, lines, written = refused(kind, folders, drop)
        assert code == 2 and not written and len(lines) == 1 and f"'{field}' is missing" in lines[0], lines


def test_a_manifest_model_file_outside_the_folder_is_refused(folders, tmp_path):
    outside = tmp_path / "elsewhere.keras"
    shutil.copyfile(folders["pre"] / "encoder.keras", outside)
    for model_file in (str(outside), "/etc/passwd", "../elsewhere.keras", "link.keras"):
        def point(file, model_file=model_file):
            from tfbert.artifacts import write_manifest

            (file.parent / "link.keras").symlink_to(outside)
            write_manifest(file.parent, "converted-checkpoint", family="bert", model_file=model_file)
        code, lines, written = refused("model dir manifest", folders, point)
        assert code == 2 and not written and len(lines) == 1, lines
        assert "tfbert.json: 'provenance.model_file'" in lines[0] and "leads out of" in lines[0], lines


def test_export_refuses_a_tokenizer_bigger_than_the_model(folders, assets, tmp_path):
    code, errors = run_cli(["export", str(folders["cls"]), "--name", "x", "--output-dir", str(tmp_path / "out"),
                            "--tokenizer", str(assets("minilm/config.json").parent), "--format", "tflite"])
    lines = errors.strip().splitlines()
    assert code == 2 and not (tmp_path / "out").exists() and len(lines) == 1, lines
    assert "has 30522 tokens but the token table of" in lines[0] and "13 rows" in lines[0], lines


def test_finetune_and_convert_refuse_a_tokenizer_bigger_than_the_model(folders, assets, tmp_path):
    minilm = str(assets("minilm/config.json").parent)
    for argv, output in (
            (["finetune", "--pretrained", str(folders["cls"]), "--tokenizer", minilm, "--train",
              str(folders["train.tsv"]), "--eval", str(folders["train.tsv"]), "--model-dir", str(tmp_path / "ft"),
              *TRAINING], tmp_path / "ft"),
            (["convert", "to-huggingface", str(folders["cls"]), "--tokenizer", minilm, "-o", str(tmp_path / "hf")],
             tmp_path / "hf")):
        code, errors = run_cli(argv)
        lines = errors.strip().splitlines()
        assert code == 2 and not output.exists() and len(lines) == 1, lines
        assert "30522 tokens" in lines[0] and "13" in lines[0], lines


def test_predict_refuses_label_names_that_do_not_name_every_class(folders):
    def fewer(file):
        write(file, {**read(file), "label_names": ["neg"]})
    code, lines, written = refused("tfbert_export.json", folders, fewer)
    assert code == 2 and not written and len(lines) == 1, lines
    assert "'label_names' names 1 labels but the model has 2 classes" in lines[0], lines


def test_predict_refuses_a_sequence_length_past_the_position_table(folders):
    def longer(file):
        write(file, {**read(file), "sequence_length": 64})
    code, lines, written = refused("TF Lite preprocessor.json", folders, longer)
    assert code == 2 and not written and len(lines) == 1, lines
    assert "sequence_length 64 is past the 32 positions" in lines[0], lines


def test_a_damaged_tflite_model_is_one_line_naming_it(folders):
    for content in (b"", b"not a flatbuffer at all", os.urandom(64)):
        code, lines, written = refused("tfbert_export.json", folders,
                                       lambda file: (file.parent / "model.tflite").write_bytes(content))
        assert code == 2 and not written and len(lines) == 1 and "model.tflite" in lines[0], lines


@pytest.mark.parametrize("kind, damage, expected", [
    ("Hugging Face tokenizer.json", lambda data: data["model"].update(vocab=5), "'model.vocab' is 5"),
    ("tfbert tokenizer_config.json", lambda data: data.update(special_tokens=7), "'special_tokens' is 7"),
    ("Hugging Face config.json", lambda data: data.update(num_hidden_layers=10**9), "1000000000"),
    ("config.yaml", lambda data: data["encoder"].update(num_layers=10**9), "1000000000"),
    ("model dir manifest", lambda data: data.update(format_version=None), "'format_version' is None"),
    ("model dir preprocessor.json", lambda data: data.update(masking={"rate": 0.1}),
     "'masking.rate' is an unknown key"),
])
def test_the_reported_damaged_fields_are_one_line(folders, kind, damage, expected):
    def apply(file):
        data = read(file)
        damage(data)
        write(file, data)
    code, lines, written = refused(kind, folders, apply)
    assert code == 2 and not written and len(lines) == 1 and expected in lines[0], lines


def test_a_vocabulary_past_what_tf_text_holds_is_refused_before_any_table_is_built(folders, tmp_path):
    from tfbert.artifacts.files import MAX_VOCABULARY_SIZE

    folder = tmp_path / "big"
    shutil.copytree(folders["cls"] / "tokenizer", folder)
    with (folder / "vocab.txt").open("a", encoding="utf-8") as vocabulary:
        vocabulary.writelines(f"w{index}\n" for index in range(MAX_VOCABULARY_SIZE))
    code, errors = run_cli(["vocab", "stats", str(folder), "--data", str(folders["corpus.txt"])])
    lines = errors.strip().splitlines()
    assert code == 2 and len(lines) == 1 and str(folder) in lines[0], lines
    assert "more than the 4,194,304 TF-Text's tables hold" in lines[0], lines
