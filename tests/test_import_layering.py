"""tfbert's import graph, read statically from the source: no cycles, and the documented layers.

`config` reads the architecture registry; the registry, the family specs (`tfbert/families/<name>/spec.py`)
and their checkpoint formats import no config, no model and no TensorFlow or Keras; generic models import
Keras, `tfbert.config`, `tfbert.architectures` and each other only; a family's models add the families. A
family's other modules (ELECTRA's checkpoint loader, DeBERTa's tokenizer folder) sit above them and may use
the layers they serve (`tfbert.convert`, `tfbert.text`).
Imports under `if TYPE_CHECKING:` are left out (they never run); imports inside functions count.
"""

import ast
import graphlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tfbert"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def is_type_checking(node: ast.stmt) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and getattr(test, "id", getattr(test, "attr", None)) == "TYPE_CHECKING"


def import_statements(tree: ast.AST):
    """Every `import` / `from ... import` in `tree`, at any depth, except the `if TYPE_CHECKING:` bodies."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif is_type_checking(node):
            for other in node.orelse:
                yield from import_statements(ast.Module(body=[other], type_ignores=[]))
        else:
            yield from import_statements(node)


def imported_names(name: str, path: Path) -> set[str]:
    """The modules `name` imports: `from package import module` names the module, else the package."""
    found = set()
    for node in import_statements(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
            base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
        for alias in node.names:
            found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return found - {name}


IMPORTS = {name: imported_names(name, path) for name, path in MODULES.items()}


def tfbert_imports(name: str) -> set[str]:
    return {other for other in IMPORTS[name] if other in MODULES}


def in_layer(name: str, layer: str) -> bool:
    return name == layer or name.startswith(layer + ".")


def test_the_import_graph_has_no_cycle():
    graph = {name: tfbert_imports(name) for name in MODULES}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(reversed(error.args[1]))}")


def test_a_cycle_is_found_when_there_is_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    with pytest.raises(graphlib.CycleError):
        tuple(graphlib.TopologicalSorter(graph).static_order())


def is_family_part(name: str, part: str) -> bool:
    """Whether `name` is `tfbert.families.<family>.<part>`."""
    pieces = name.split(".")
    return len(pieces) == 4 and pieces[:2] == ["tfbert", "families"] and pieces[3] == part


FAMILY_MODULES = sorted(name for name in MODULES if in_layer(name, "tfbert.families"))
# The registry and the data of every family: what `tfbert.config` may read without building a model.
SPEC_LAYER = sorted(name for name in MODULES if in_layer(name, "tfbert.architectures")
                    or name in ("tfbert.families", *(n for n in FAMILY_MODULES
                                                     if is_family_part(n, "spec") or is_family_part(n, "formats")))
                    or (in_layer(name, "tfbert.families") and name.count(".") == 2))


def imports_model_code(other: str) -> bool:
    return (other.split(".")[0] in ("tensorflow", "keras", "tf_keras") or in_layer(other, "tfbert.models")
            or is_family_part(other, "models"))


def test_every_family_has_a_spec_and_formats():
    families = {name.split(".")[2] for name in FAMILY_MODULES if name != "tfbert.families"}
    assert families >= {"bert", "albert", "roberta", "electra", "spanbert", "xlm", "xlmr", "deberta"}
    missing = [f"{family}.{part}" for family in sorted(families) for part in ("spec", "formats")
               if f"tfbert.families.{family}.{part}" not in MODULES]
    assert not missing


@pytest.mark.parametrize("name", ["tfbert.config", *SPEC_LAYER])
def test_config_specs_and_formats_import_no_tensorflow_keras_or_models(name):
    forbidden = [other for other in IMPORTS[name] if imports_model_code(other)]
    assert not forbidden, f"{name} imports {forbidden}"


def test_specs_and_formats_import_no_config():
    offending = {name: sorted(other for other in tfbert_imports(name) if other == "tfbert.config")
                 for name in SPEC_LAYER}
    assert not {name: found for name, found in offending.items() if found}


@pytest.mark.parametrize("name", [name for name in FAMILY_MODULES if is_family_part(name, "spec")])
def test_a_family_spec_imports_only_specs_and_formats(name):
    allowed = ("tfbert.architectures.spec",)
    offending = [other for other in tfbert_imports(name)
                 if other not in allowed and not is_family_part(other, "spec") and not is_family_part(other, "formats")]
    assert not offending, f"{name} imports {offending}"


@pytest.mark.parametrize("name", sorted(name for name in MODULES if in_layer(name, "tfbert.models")))
def test_models_import_only_keras_config_and_architectures(name):
    allowed = ("tfbert.models", "tfbert.config", "tfbert.architectures", "tfbert._lazy")
    offending = [other for other in tfbert_imports(name) if not any(in_layer(other, layer) for layer in allowed)]
    offending += [other for other in IMPORTS[name] if other.split(".")[0] in ("tensorflow", "tf_keras")]
    assert not offending, f"{name} imports {offending}"


@pytest.mark.parametrize("name", [name for name in FAMILY_MODULES if is_family_part(name, "models")])
def test_family_models_import_only_keras_config_architectures_models_and_families(name):
    allowed = ("tfbert.models", "tfbert.config", "tfbert.architectures", "tfbert.families")
    offending = [other for other in tfbert_imports(name) if not any(in_layer(other, layer) for layer in allowed)]
    offending += [other for other in IMPORTS[name] if other.split(".")[0] in ("tensorflow", "tf_keras")]
    assert not offending, f"{name} imports {offending}"


def test_a_family_spec_imported_first_loads_without_keras_and_is_the_registered_one():
    """The registry imports the built-in specs on first use, so a spec imported before it (which imports
    `tfbert.architectures.spec`) meets no half-built module at run time."""
    script = """
import sys
from tfbert.families.xlmr.spec import SPEC
from tfbert import architectures
assert architectures.get("xlmr") is SPEC and architectures.get("roberta").name == "roberta"
print(sorted(name for name in ("keras", "tensorflow", "tfbert.models") if name in sys.modules))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


# The example readers sit with the other readers: they read files and build examples, and load no model.
DATA_MAY_NOT_IMPORT = ("tfbert.models", "tfbert.finetuning", "tfbert.inference", "tfbert.export", "tfbert.tasks",
                       "tfbert.training", "tfbert.convert")


@pytest.mark.parametrize("name", sorted(name for name in MODULES if in_layer(name, "tfbert.data")))
def test_data_imports_no_models_finetuning_inference_or_export(name):
    offending = [other for other in tfbert_imports(name)
                 if any(in_layer(other, layer) for layer in DATA_MAY_NOT_IMPORT) or is_family_part(other, "models")]
    assert not offending, f"{name} imports {offending}"


def test_task_models_are_in_the_models_layer_and_tasks_is_only_the_facade():
    """`test_models_import_only_keras_config_and_architectures` covers `tfbert.models.tasks`; `tfbert.tasks`
    re-exports lazily (`tfbert._lazy`) and holds no module of its own."""
    task_models = {"tfbert.models.tasks", "tfbert.models.tasks.classification", "tfbert.models.tasks.embedding"}
    assert task_models <= set(MODULES)
    assert [name for name in MODULES if in_layer(name, "tfbert.tasks")] == ["tfbert.tasks"]
    assert tfbert_imports("tfbert.tasks") == {"tfbert._lazy"}


@pytest.mark.parametrize("lower, upper", [
    ("tfbert.convert", "tfbert.finetuning"), ("tfbert.convert", "tfbert.inference"), ("tfbert.convert", "tfbert.tasks"),
    ("tfbert.models", "tfbert.finetuning"), ("tfbert.models", "tfbert.tasks"),
    ("tfbert.finetuning", "tfbert.inference"),
    ("tfbert.export", "tfbert.finetuning"), ("tfbert.export", "tfbert.inference"),
])
def test_a_lower_layer_imports_nothing_of_an_upper_one(lower, upper):
    offending = {name: sorted(other for other in tfbert_imports(name) if in_layer(other, upper))
                 for name in MODULES if in_layer(name, lower)}
    assert not {name: found for name, found in offending.items() if found}


DEFERRED = re.compile(r"^\s*# Deferred \((start-up|cycle)\): \S")


def function_import_blocks(tree: ast.AST):
    """The runs of consecutive import statements inside functions (`if TYPE_CHECKING:` left out), each as a list."""
    def runs(body):
        run = []
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                run.append(node)
                continue
            if run:
                yield run
                run = []
        if run:
            yield run

    def walk(node, in_function):
        for field in ("body", "orelse", "finalbody", "handlers"):
            body = getattr(node, field, None)
            if not isinstance(body, list) or (field == "body" and is_type_checking(node)):
                continue
            if in_function and all(isinstance(child, ast.stmt) for child in body):
                yield from runs(body)
            for child in body:
                yield from walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))
        for case in getattr(node, "cases", ()):
            yield from walk(case, in_function)

    yield from walk(tree, False)


def imports_tfbert(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "tfbert" for alias in node.names)
    return bool(node.level) or (node.module or "").split(".")[0] == "tfbert"


def says_why(lines: list[str], lineno: int) -> bool:
    """Whether the comment right above line `lineno` (1-based; one comment, perhaps wrapped over several lines)
    starts with `# Deferred (start-up): ` or `# Deferred (cycle): `."""
    above = lineno - 2
    while above >= 0 and lines[above].lstrip().startswith("#"):
        if DEFERRED.match(lines[above]):
            return True
        above -= 1
    return False


def undeclared_deferred_imports(source: str) -> list[int]:
    """The first lines of the function-level import blocks of `source` that import tfbert without the comment."""
    lines = source.splitlines()
    return [block[0].lineno for block in function_import_blocks(ast.parse(source))
            if any(imports_tfbert(node) for node in block) and not says_why(lines, block[0].lineno)]


def test_every_function_level_import_of_tfbert_says_why_it_is_deferred():
    """A tfbert module imported inside a function is deferred for start-up time (the CLI imports no TensorFlow for
    `--help`) or to break a cycle, and the line above its block says which: `# Deferred (start-up): <why>` or
    `# Deferred (cycle): <why>`. Anything else is imported at the top of its module."""
    missing = [f"{path.relative_to(PACKAGE.parent)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
               for line in undeclared_deferred_imports(path.read_text(encoding="utf-8"))]
    assert not missing, f"{len(missing)} function-level imports without a `# Deferred (...)` comment: {missing}"


def test_a_function_level_import_without_its_comment_is_found():
    source = ("import json\n\n\ndef f():\n    import os\n\n    from tfbert import text\n\n\ndef g():\n"
              "    # Deferred (start-up): TensorFlow\n    from tfbert import text\n    import tfbert.data\n"
              "    if text:\n        from . import base\n    # Deferred (because): no such reason\n"
              "    from tfbert.text import base\n    import numpy\n\n\ndef h():\n    # Deferred (cycle): a reason\n"
              "    # wrapped over two lines\n    from tfbert import text\n"
              "    # Deferred (cycle): above code, not the block\n"
              "    text.f()\n    from tfbert import data\n")
    blocks = function_import_blocks(ast.parse(source))
    assert [[node.lineno for node in block] for block in blocks] == [[5, 7], [12, 13], [17, 18], [15], [24], [27]]
    assert undeclared_deferred_imports(source) == [5, 17, 15, 27]
