"""Every remedy a message gives is a command that exists, and every error about a file names it.

The `tfbert ...` commands spelled in tfbert's source (messages, help texts, examples) are collected statically and
each one's `--help` runs, its flags looked up in its parser; messages built at run time are checked the same way
where a test provokes them. Then the messages of issue 44 one by one, each naming its file.
"""

import argparse
import ast
import errno
import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from tiny_folders import TRAINING, run_cli, tiny_folders

from tfbert.cli import build_parser

PACKAGE = Path(__file__).resolve().parents[1] / "tfbert"
WORD = re.compile(r"[a-z][a-z0-9-]*")


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    return tiny_folders(tmp_path_factory)


def message_texts(tree: ast.AST) -> list[tuple[int, str]]:
    """The string constants and f-strings of `tree` (f-string fields as `{}`), docstrings left out."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    inside_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            texts.append((node.lineno, "".join(part.value if isinstance(part, ast.Constant) else "{}"
                                               for part in node.values)))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and id(node) not in inside_fstrings):
            texts.append((node.lineno, node.value))
    return texts


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next((action.choices for action in parser._actions if isinstance(action, argparse._SubParsersAction)), {})


def _required_choices(parser: argparse.ArgumentParser) -> tuple | None:
    """The choices of the parser's first positional, where it is required and has choices (`convert SOURCE`)."""
    positional = next((action for action in parser._actions if not action.option_strings
                       and not isinstance(action, argparse._SubParsersAction)), None)
    return tuple(positional.choices) if positional is not None and positional.choices and \
        positional.nargs is None else None


def suggested_commands(text: str) -> list[tuple[list[str], list[str], str | None]]:
    """Each `tfbert WORD ...` in `text`: the command words (subcommands, a required choice), the `--flags`
    given with them, and what is wrong (an unknown command or choice, a flag the command lacks), or None."""
    found = []
    for match in re.finditer(r"(?<![\w/.-])tfbert ((?:\S+ ?){1,12})", text):
        tokens = match.group(1).split()
        if tokens[0].endswith(":"):   # "tfbert benchmark: running ...", a message's own prefix
            continue
        parser, argv, problem, index = build_parser(), [], None, 0
        for index, token in enumerate(tokens):
            word = token.strip("`'\"(),;:")
            subcommands, choices = _subcommands(parser), _required_choices(parser)
            if word in subcommands:
                argv.append(word)
                parser = subcommands[word]
            elif choices is not None and word in choices:
                argv.append(word)
            elif WORD.fullmatch(word) and (choices is not None or (subcommands and not argv and index + 1 < len(tokens)
                                                                    and tokens[index + 1].startswith("-"))):
                problem = f"{' '.join(['tfbert', *argv])} has no {word!r}"
                break
            else:
                break
            if token != word and token[-1] in ",;)":
                index += 1
                break
        else:
            index = len(tokens)
        flags = []
        for token in tokens[index:]:
            if token.startswith("--"):
                flags.append(re.split(r"[=,;)`'\"]", token)[0])
            if token.endswith((",", ";", ")")) or token == "tfbert":
                break
        if argv or problem:
            unknown = [flag for flag in flags if flag not in parser._option_string_actions]
            if unknown and problem is None:
                problem = f"{' '.join(['tfbert', *argv])} has no {unknown[0]}"
            found.append((argv, flags, problem))
    return found


def source_suggestions() -> dict[tuple[str, ...], list[str]]:
    """`{command words: where}` of every `tfbert ...` command spelled in tfbert's source; problems raise."""
    commands, problems = {}, []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in message_texts(ast.parse(path.read_text(encoding="utf-8"))):
            for argv, _, problem in suggested_commands(text):
                where = f"{path.relative_to(PACKAGE.parent)}:{line}"
                if problem:
                    problems.append(f"{where}: {problem}")
                commands.setdefault(tuple(argv), []).append(where)
    assert not problems, "\n".join(problems)
    return commands


def test_every_command_a_message_suggests_exists_and_its_help_runs():
    commands = source_suggestions()
    assert ("vocab", "add") in commands and ("convert", "to-huggingface") in commands and ("export",) in commands
    for argv, where in commands.items():
        code, errors = run_cli([*argv, "--help"])
        assert code == 0, (argv, where, errors)


@pytest.mark.parametrize("text, problem", [
    ("convert it first (tfbert convert tflite-export runs/x -o model.keras)", "tfbert convert has no 'tflite-export'"),
    ("resume it with tfbert pretrain --resume-from runs/a", "tfbert pretrain has no --resume-from"),
    ("give the model (tfbert serve --port 8500)", "tfbert has no 'serve'"),
    ("add words with tfbert vocab add, then tfbert finetune", None),
    ("another tfbert process (pid 7) is writing", None),
])
def test_the_collector_finds_commands_that_do_not_exist(text, problem):
    assert [found[2] for found in suggested_commands(text) if found[2]] == ([problem] if problem else [])


def assert_remedies_exist(line: str) -> None:
    for argv, _, problem in suggested_commands(line):
        assert problem is None, (problem, line)
        code, errors = run_cli([*argv, "--help"])
        assert code == 0, (argv, errors)


def test_convert_to_huggingface_of_an_export_names_a_command_that_exists(folders, tmp_path):
    code, errors = run_cli(["convert", "to-huggingface", str(folders["tflite"] / "cls"), "-o", str(tmp_path / "hf")])
    lines = errors.strip().splitlines()
    assert code == 2 and len(lines) == 1 and not (tmp_path / "hf").exists(), lines
    assert "is an export (tflite-export)" in lines[0] and str(folders["cls"]) in lines[0], lines
    assert_remedies_exist(lines[0])


def test_a_run_written_by_a_newer_tfbert_is_not_called_another_folder(folders, tmp_path):
    from tfbert.artifacts import write_manifest

    run = tmp_path / "run"
    write_manifest(run, "pretraining-run", family="bert")
    manifest = run / "tfbert.json"
    manifest.write_text(manifest.read_text().replace('"format_version": 1', '"format_version": 2'))
    before = sorted(path.name for path in run.iterdir())
    code, errors = run_cli(["pretrain", "--config", str(folders["run"] / "config.yaml"), "--tokenizer",
                            str(folders["pre"] / "tokenizer"), "--data", str(folders["corpus.txt"]), "--model-dir",
                            str(run), "--steps", "1", "--sequence-length", "32", "--max-predictions", "4"])
    lines = errors.strip().splitlines()
    assert code == 2 and len(lines) == 1 and sorted(path.name for path in run.iterdir()) == before, lines
    assert "tfbert.json: 'format_version' is 2, newer than this tfbert reads (1)" in lines[0], lines
    assert "--overwrite" not in lines[0] and "not a tfbert pretrain run" not in lines[0], lines


def test_a_manifest_version_that_is_not_a_number_names_the_file(folders, tmp_path):
    shutil.copytree(folders["cls"], tmp_path / "cls")
    manifest = tmp_path / "cls" / "tfbert.json"
    manifest.write_text(manifest.read_text().replace('"format_version": 1', '"format_version": "one"'))
    code, errors = run_cli(["export", str(tmp_path / "cls"), "--name", "x", "--output-dir", str(tmp_path / "out")])
    assert code == 2 and f"{manifest}: 'format_version' is 'one'" in errors and "invalid literal" not in errors


def damaged_keras(source: Path, target: Path, member: str, content: bytes) -> None:
    """A copy of the `.keras` archive `source` with `member` replaced by `content`."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w") as copy:
        for item in original.infolist():
            copy.writestr(item, content if item.filename == member else original.read(item.filename))


@pytest.mark.parametrize("member, content", [("config.json", b'{"class_name": "Encoder", "config": {'),
                                             ("model.weights.h5", b"not an hdf5 file")])
def test_a_damaged_keras_file_is_one_line_naming_it(folders, tmp_path, member, content):
    shutil.copytree(folders["cls"], tmp_path / "cls")
    model = tmp_path / "cls" / "best.keras"
    damaged_keras(folders["cls"] / "best.keras", model, member, content)
    code, errors = run_cli(["export", str(tmp_path / "cls"), "--name", "x", "--output-dir", str(tmp_path / "out")])
    lines = errors.strip().splitlines()
    assert code == 2 and len(lines) == 1 and not (tmp_path / "out").exists(), lines
    assert f"{model} is not a Keras model tfbert can load" in lines[0], lines


def test_a_truncated_pytorch_checkpoint_is_called_damaged_not_unsafe(folders, tmp_path):
    import torch
    from safetensors.numpy import load_file

    folder = tmp_path / "hf"
    shutil.copytree(folders["hf"], folder)
    state = {name: torch.from_numpy(array) for name, array in load_file(str(folder / "model.safetensors")).items()}
    (folder / "model.safetensors").unlink()
    torch.save(state, folder / "pytorch_model.bin")
    data = (folder / "pytorch_model.bin").read_bytes()
    for cut in (0, 100, len(data) // 2):
        (folder / "pytorch_model.bin").write_bytes(data[:cut])
        code, errors = run_cli(["convert", "huggingface", str(folder), "-o", str(tmp_path / "out.keras")])
        lines = errors.strip().splitlines()
        assert code == 2 and len(lines) == 1 and not (tmp_path / "out.keras").exists(), lines
        assert f"{folder / 'pytorch_model.bin'} is damaged or cut off" in lines[0] and "code" not in lines[0], lines


def test_vocab_on_a_full_disk_names_its_output_and_leaves_no_lock_file(folders, tmp_path, monkeypatch):
    import tfbert.output_lock

    def full(descriptor, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tfbert.output_lock.os, "write", full)
    output = tmp_path / "vocab"
    code, errors = run_cli(["vocab", "--kind", "wordpiece", "--data", str(folders["corpus.txt"]), "--vocab-size", "40",
                            "--output", str(output)])
    monkeypatch.undo()
    lines = errors.strip().splitlines()
    assert code == 2 and len(lines) == 1 and f"cannot write {output}" in lines[0], lines
    assert os.listdir(tmp_path) == [], os.listdir(tmp_path)


def test_finetune_with_a_tokenizer_bigger_than_the_model_names_a_command_that_exists(folders, assets, tmp_path):
    code, errors = run_cli(["finetune", "--pretrained", str(folders["pre"]), "--tokenizer",
                            str(assets("minilm/config.json").parent), "--train", str(folders["train.tsv"]), "--eval",
                            str(folders["train.tsv"]), "--model-dir", str(tmp_path / "ft"), *TRAINING])
    lines = errors.strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert_remedies_exist(lines[0])
