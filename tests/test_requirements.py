"""`python -m tfbert.requirements`: tfbert's requirements less the TensorFlow ones (the TensorFlow TPU route installs
them after `pip install --no-deps tfbert`), and `--check`, which fails where two TensorFlow builds are installed."""

import subprocess
import sys
import textwrap

import pytest

from tfbert import requirements
from tfbert.requirements import problems

TFBERT_REQUIRES = ["tensorflow<2.22,>=2.20", "tensorflow-text<2.22,>=2.20", "keras<4,>=3.10",
                   'pytest>=8; extra == "test"', 'numpy>=1.26; python_version < "3"']


def install(site, name: str, version: str, requires=()) -> None:
    """A distribution's metadata in `site`, as pip leaves it (no code: the checks read only metadata)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    (info / "METADATA").write_text("\n".join(lines + [f"Requires-Dist: {line}" for line in requires]) + "\n")


@pytest.fixture
def tpu_site(tmp_path):
    """The TensorFlow TPU route's environment: tensorflow-tpu 2.20.0, TF-Text 2.20.1, Keras and tfbert."""
    install(tmp_path, "tfbert", "0.1.0", TFBERT_REQUIRES)
    install(tmp_path, "tensorflow-tpu", "2.20.0")
    install(tmp_path, "tensorflow_text", "2.20.1", ["tensorflow<2.21,>=2.20.0"])
    install(tmp_path, "keras", "3.15.1")
    return tmp_path


def test_requirements_leave_out_the_named_ones_the_extras_and_other_interpreters(tpu_site):
    found = requirements.requirements(without=["TensorFlow", "tensorflow_text"], path=[str(tpu_site)])
    assert [str(requirement) for requirement in found] == ["keras<4,>=3.10"]
    every = requirements.requirements(path=[str(tpu_site)])
    assert [requirement.name for requirement in every] == ["tensorflow", "tensorflow-text", "keras"]


def test_one_tpu_build_meets_the_tensorflow_requirement(tpu_site):
    assert problems([str(tpu_site)]) == []


def test_two_tensorflow_builds_are_one_problem(tpu_site):
    install(tpu_site, "tensorflow", "2.21.0")
    assert problems([str(tpu_site)]) == [
        "tensorflow 2.21.0 and tensorflow-tpu 2.20.0 are installed together; they write the same `tensorflow` "
        "package, so one has overwritten the other: uninstall them all (pip uninstall tensorflow tensorflow-cpu "
        'tensorflow-tpu) and install one route again (docs/distributed.md, "Installing for TPUs and GPUs")']


def test_unmet_requirements_and_another_tf_text_release_are_named(tmp_path):
    install(tmp_path, "tfbert", "0.1.0", TFBERT_REQUIRES)
    install(tmp_path, "tensorflow-tpu", "2.19.1")
    install(tmp_path, "tensorflow-text", "2.20.1")
    assert problems([str(tmp_path)]) == [
        "tensorflow-tpu 2.19.1 is installed; tfbert requires tensorflow<2.22,>=2.20: pip install "
        "'tensorflow<2.22,>=2.20' (or another route: docs/distributed.md, \"Installing for TPUs and GPUs\")",
        "keras is not installed; tfbert requires keras<4,>=3.10: pip install 'keras<4,>=3.10'",
        "tensorflow-text 2.20.1 is installed beside tensorflow-tpu 2.19.1; TF-Text's ops load only in the "
        "TensorFlow release they were built for: pip install --no-deps 'tensorflow-text==2.19.*'"]


def test_no_tensorflow_at_all_is_named(tmp_path):
    install(tmp_path, "tfbert", "0.1.0", TFBERT_REQUIRES)
    assert problems([str(tmp_path)])[0].startswith("no TensorFlow is installed (none of tensorflow, tensorflow-cpu, ")


def _run_module(*args: str, python_path: str = "", blocked=()) -> subprocess.CompletedProcess:
    """`python -m tfbert.requirements ARGS` in a new interpreter where the modules `blocked` cannot be imported."""
    code = textwrap.dedent(f"""
        import runpy, sys

        class Blocked:   # as if not installed
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in {list(blocked)!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}")

        sys.meta_path.insert(0, Blocked())
        sys.argv = ["tfbert.requirements", *{list(args)!r}]
        runpy.run_module("tfbert.requirements", run_name="__main__")
    """)
    path = [python_path] if python_path else []
    environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(path + sys.path)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment)


def test_the_listing_runs_without_tensorflow_or_keras_as_after_pip_install_no_deps():
    listed = _run_module("--without", "tensorflow", "tensorflow-text", blocked=("tensorflow", "keras", "jax"))
    assert listed.returncode == 0, listed.stderr
    from packaging.requirements import Requirement

    names = {Requirement(line).name for line in listed.stdout.splitlines()}
    assert "keras" in names and "sentencepiece" in names and not names & {"tensorflow", "tensorflow-text"}


def test_check_passes_here_and_fails_with_a_second_build_beside_tensorflow(tmp_path, capsys):
    assert requirements.main(["--check"]) == 0   # TensorFlow is imported here, so it is asked here
    assert "; every requirement is met" in capsys.readouterr().out
    install(tmp_path, "tensorflow-tpu", "2.20.0")   # pip's record of a second build, beside this environment's
    beside = _run_module("--check", python_path=str(tmp_path))
    assert beside.returncode == 1 and " and tensorflow-tpu 2.20.0 are installed together" in beside.stderr
