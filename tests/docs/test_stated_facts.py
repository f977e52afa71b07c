"""What the docs state about the code, checked against the code: a page that restates a number or a name drifts
the day the code changes, so each one a page states is read here from its owner (the suite, the registry, the
configs, the command line) and compared. Where a page is generated instead (README's family table,
docs/hooks/feature_table.py; the CLI reference, docs/hooks/cli_reference.py) its own test checks it."""

import ast
import dataclasses
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
CONFORMANCE_TESTS = ROOT / "tests" / "conformance" / "test_families.py"


def text_of(page: Path) -> str:
    """A page with its line breaks and runs of spaces as single spaces (prose wraps anywhere)."""
    return " ".join(page.read_text(encoding="utf-8").split())


def table_rows(page: Path, first_cell: str, header: str = "") -> list[list[str]]:
    """The cells of the Markdown table rows of `page` whose first cell matches `first_cell` (a regex), in the
    tables whose header row starts with `header`."""
    rows, in_table = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            in_table = None
            continue
        if in_table is None:
            in_table = line.startswith(header)
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if in_table and re.fullmatch(first_cell, cells[0]):
            rows.append(cells)
    return rows


def code_lines(page: Path) -> list[str]:
    """The lines of the page's ```bash and ```text blocks."""
    blocks = re.findall(r"^```(?:bash|text)\n(.*?)^```", page.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    return [line for block in blocks for line in block.splitlines()]


# --- the command line -------------------------------------------------------------------------------------------

def commands() -> tuple[str, ...]:
    from tfbert.cli import COMMANDS

    return COMMANDS


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_command_tables_list_every_command_once(page):
    named = [re.match(r"`tfbert ([\w-]+)", row[0])[1] for row in table_rows(ROOT / page, r"`tfbert [^`]+`")]
    assert sorted(named) == sorted(commands())


def test_every_tfbert_command_a_page_names_exists():
    """`tfbert WORD` in backticks or at the start of a line of a code block: WORD is a command of `tfbert.cli`."""
    quoted = re.compile(r"`tfbert ([a-z][\w-]*)")
    typed = re.compile(r"^\s*(?:\$ )?tfbert ([a-z][\w-]*)")
    named = {(page, word) for page in PAGES for word in quoted.findall(page.read_text(encoding="utf-8"))}
    named |= {(page, match[1]) for page in PAGES for line in code_lines(page) for match in [typed.match(line)] if match}
    unknown = {f"{page.relative_to(ROOT)}: tfbert {word}" for page, word in named if word not in commands()}
    assert not unknown


# --- the conformance suite --------------------------------------------------------------------------------------

def conformance_size() -> dict:
    """`SMALL` of tests/conformance/conformance_families.py, the size every family's tiny config has."""
    spec = importlib.util.spec_from_file_location("stated_conformance_families",
                                                  ROOT / "tests" / "conformance" / "conformance_families.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SMALL


def test_the_conformance_page_states_the_suite_s_tiny_size_and_generator():
    small = conformance_size()

    stated = (f"(hidden {small['hidden_size']}, {small['num_layers']} layers, {small['num_heads']} heads, "
              f"feed-forward {small['intermediate_size']}, {small['max_positions']} positions)")
    assert stated in text_of(DOCS / "conformance.md")
    source = (ROOT / "tests" / "conformance" / "conformance_families.py").read_text(encoding="utf-8")
    assert "scaled_generator(encoder, 0.5)" in source and "scaled_generator(encoder, 0.5)" in text_of(
        DOCS / "conformance.md")


def test_the_conformance_page_names_the_built_in_families_in_the_registry_s_order():
    from tfbert.architectures.registry import BUILT_IN

    assert f"(`tfbert.architectures.names()`: {', '.join(BUILT_IN)} and" in text_of(DOCS / "conformance.md")


def test_the_conformance_page_describes_each_check_of_the_suite():
    tree = ast.parse(CONFORMANCE_TESTS.read_text(encoding="utf-8"))
    checks = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}
    described = {row[0].strip("`") for row in table_rows(DOCS / "conformance.md", r"`test_\w+`")}
    assert described == checks


def test_the_tolerances_the_conformance_page_states_are_the_suite_s():
    source = CONFORMANCE_TESTS.read_text(encoding="utf-8")
    stated = set(re.findall(r"\(to (1e-\d+)\)", text_of(DOCS / "conformance.md")))
    assert stated and stated <= set(re.findall(r"\b1e-\d+\b", source))


# --- the registry and the configs ------------------------------------------------------------------------------

def test_the_guide_describes_every_field_of_a_spec():
    from tfbert.architectures import ArchitectureSpec

    described = {name for row in table_rows(DOCS / "adding-an-architecture.md", r"`\w+`(, `\w+`)*")
                 for name in re.findall(r"`(\w+)`", row[0])}
    assert {field.name for field in dataclasses.fields(ArchitectureSpec)} <= described


def test_the_models_page_lists_every_shipped_config_with_its_sizes_and_parameter_count():
    from tfbert.config import available_configs, load_config
    from tfbert.models.parameters import count_encoder_parameters

    rows = {row[0].strip("`"): row[1:8] for row in table_rows(DOCS / "models.md", r"`\w+`", "| config | L |")}
    assert sorted(rows) == available_configs()
    for name, stated in rows.items():
        encoder = load_config(name).encoder
        actual = [encoder.num_layers, encoder.hidden_size, encoder.embedding_size, encoder.num_heads,
                  f"{encoder.vocab_size:,}", encoder.sharing, f"{count_encoder_parameters(encoder):,}"]
        assert stated == [str(value) for value in actual], name
