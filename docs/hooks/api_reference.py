"""MkDocs hook: one API reference page per subpackage of `tfbert`, rendered by mkdocstrings from the docstrings.

The pages are written at build time from the package's folders, so a new subpackage gets its page without
editing `mkdocs.yml`'s nav (which lists `api/` as a section). The CLI (`tfbert.commands`) has its own page,
and the benchmark lab is not a user API.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

LEFT_OUT = {"commands", "benchmarking"}


def on_config(config):
    """Expands the nav entry `api/index.md` into a section with every generated page."""
    names = subpackages(Path(config.config_file_path).parent / "tfbert")
    section = ["api/index.md"] + [{f"tfbert.{name}": f"api/{name}.md"} for name in names]
    config.nav = [expand(item, section) for item in config.nav]
    return config


def expand(item, section):
    """The nav item, with the API section wherever an entry points at `api/index.md` (at any depth)."""
    if isinstance(item, dict):
        return {title: section if value == "api/index.md" else expand(value, section) for title, value in item.items()}
    if isinstance(item, list):
        return [expand(entry, section) for entry in item]
    return item


def on_files(files: Files, config) -> Files:
    """Adds `api/index.md` (the top-level API) and `api/NAME.md` for each documented subpackage."""
    package = Path(config.config_file_path).parent / "tfbert"
    files.append(File.generated(config, "api/index.md", content=page("tfbert", "API reference", submodules=False)))
    for name in subpackages(package):
        files.append(File.generated(config, f"api/{name}.md", content=page(f"tfbert.{name}", f"tfbert.{name}")))
    return files


def subpackages(package: Path) -> list[str]:
    """The subpackages (folders with an `__init__.py`) and top-level modules users import, by name."""
    folders = [path.name for path in package.iterdir() if (path / "__init__.py").exists()]
    modules = [path.stem for path in package.glob("*.py") if not path.stem.startswith("_") and path.stem != "cli"]
    return sorted(set(folders + modules) - LEFT_OUT)


def page(module: str, title: str, submodules: bool = True) -> str:
    """A page that renders `module` (and its submodules) with mkdocstrings."""
    return (f"# {title}\n\n::: {module}\n    options:\n      show_submodules: {str(submodules).lower()}\n")
