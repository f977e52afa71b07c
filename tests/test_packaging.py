"""pyproject.toml ships every tfbert package and every config."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_every_package_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "tfbert").rglob("__init__.py")
    } | {"tfbert.configs"}
    assert listed == on_disk


def test_configs_ship_as_package_data():
    from tfbert.config import available_configs

    assert sorted(path.stem for path in (ROOT / "configs").glob("*.yaml")) == available_configs()
