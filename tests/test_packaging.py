"""The wheel ships every tfbert package and every family's configs: setuptools finds them, no list is kept."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[1]
PACKAGES = {".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "tfbert").rglob("__init__.py")}
CONFIGS = sorted((ROOT / "tfbert" / "families").glob("*/configs/*.yaml"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The wheel setuptools builds from a copy of the checkout (the build writes beside the sources)."""
    source = tmp_path_factory.mktemp("source")
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    shutil.copytree(ROOT / "tfbert", source / "tfbert", ignore=shutil.ignore_patterns("__pycache__"))
    build = ("import sys; from setuptools import build_meta; "
             "print(build_meta.build_wheel(sys.argv[1]))")
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-c", build, str(out)], cwd=source, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return zipfile.ZipFile(out / result.stdout.split()[-1])


def test_the_wheel_holds_every_package_under_tfbert(wheel):
    shipped = {".".join(Path(name).parent.parts) for name in wheel.namelist() if name.endswith("/__init__.py")}
    assert shipped == PACKAGES


def test_the_wheel_holds_every_family_s_configs_beside_its_spec(wheel):
    shipped = sorted(name for name in wheel.namelist() if name.endswith(".yaml"))
    assert shipped == [path.relative_to(ROOT).as_posix() for path in CONFIGS]


def test_every_shipped_config_is_found_and_names_the_family_whose_package_holds_it():
    from tfbert.architectures.configs import shipped_configs

    assert sorted(path.stem for path in CONFIGS) == list(shipped_configs())
    for path in CONFIGS:
        assert yaml.safe_load(path.read_text(encoding="utf-8"))["architecture"] == path.parents[1].name, path
