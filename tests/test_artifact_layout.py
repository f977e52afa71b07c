"""The folder layout's file names are spelled in one module, `tfbert.artifacts.layout`; every other module imports
them. Read statically from the source, as tests/test_import_layering.py reads the imports."""

import ast
from pathlib import Path

import pytest

from tfbert.artifacts import layout

PACKAGE = Path(__file__).resolve().parents[1] / "tfbert"
LAYOUT_MODULE = PACKAGE / "artifacts" / "layout.py"
NAMES = {value for name, value in vars(layout).items() if name.isupper() and isinstance(value, str)}
# Names with a dot are file names wherever they appear; the bare folder names ("tokenizer", "checkpoint") are
# also ordinary words (a dict key, a flag), so only their uses as a path count.
FILE_NAMES = {name for name in NAMES if "." in name}
FOLDER_NAMES = {name for name in NAMES if "." not in name and "/" not in name} - {layout.ENCODER_FOLDER}


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of `tree`'s module, classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def path_operands(tree: ast.AST) -> set[int]:
    """The ids of the string constants used as a path part: `folder / "x"`, `os.path.join(..., "x")`, or a
    module-level `NAME = "x"`."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            found.update(id(side) for side in (node.left, node.right))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "join":
            found.update(id(argument) for argument in node.args)
    for statement in getattr(tree, "body", []):
        if isinstance(statement, ast.Assign):
            found.add(id(statement.value))
    return found


def spelled_layout_names(source: str, label: str) -> list[str]:
    tree = ast.parse(source)
    skipped, as_paths = docstrings(tree), path_operands(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in skipped:
            continue
        if node.value in FILE_NAMES or (node.value in FOLDER_NAMES and id(node) in as_paths):
            found.append(f"{label}:{node.lineno}: {node.value!r}")
    return found


def test_the_layout_names_every_file_of_the_folders_tfbert_writes():
    assert {"tfbert.json", "tokenizer", "config.yaml", "checkpoint", "task.json", "best.keras", "preprocessor.json",
            "tfbert_export.json", "tokenizer.json", "tokenizer_config.json", "model.tflite"} <= NAMES


def test_layout_names_are_spelled_only_in_the_layout_module():
    offending = [line for path in sorted(PACKAGE.rglob("*.py")) if path != LAYOUT_MODULE
                 for line in spelled_layout_names(path.read_text(encoding="utf-8"),
                                                  str(path.relative_to(PACKAGE.parent)))]
    assert not offending, "spell these through tfbert.artifacts.layout:\n" + "\n".join(offending)


@pytest.mark.parametrize("source, expected", [
    ('TOKENIZER = "tokenizer"\n', 1),
    ('def f(folder):\n    return folder / "task.json"\n', 1),
    ('import os\ndef f(d):\n    return os.path.join(d, "checkpoint")\n', 1),
    ('def f():\n    """Reads task.json."""\n    return {"tokenizer": 1}\n', 0),
])
def test_the_check_finds_a_spelled_name_and_leaves_words_and_docstrings(source, expected):
    assert len(spelled_layout_names(source, "probe.py")) == expected
