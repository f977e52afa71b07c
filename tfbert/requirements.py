"""tfbert's own requirements as pip reads them, and a check that one TensorFlow build is installed.

On a TPU VM that trains with TensorFlow, `tensorflow-tpu` is the TensorFlow build; a plain `pip install tfbert`
would add the `tensorflow` wheel (CPU only) beside it, and the two overwrite each other's `tensorflow/` package.
That route (docs/distributed.md, "Installing for TPUs and GPUs") installs tfbert with `--no-deps`, then the rest
of its requirements from this module, then checks the result:

    pip install --no-deps tfbert
    pip install -r <(python -m tfbert.requirements --without tensorflow tensorflow-text)
    python -m tfbert.requirements --check   # exit status 1, one line a problem, unless it is one build that starts

It reads only the installed distributions' metadata (`importlib.metadata`) and imports nothing of tfbert's
stack, so it runs right after `pip install --no-deps`.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from typing import Iterable, Sequence

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tfbert import accelerators

ROUTES = accelerators.ROUTES_SECTION
PROJECT = "tfbert"
# The distributions that install the `tensorflow` package: exactly one may be installed.
TENSORFLOW_BUILDS = ("tensorflow", "tensorflow-cpu", "tensorflow-tpu")
# TF-Text's ops are built against one TensorFlow release: its major.minor must be TensorFlow's.
TENSORFLOW_TEXT = "tensorflow-text"


def _installed(name: str, path: Sequence[str] | None) -> importlib.metadata.Distribution | None:
    """The distribution called `name` (any spelling) installed on `path` (default: `sys.path`), or None."""
    where = {} if path is None else {"path": list(path)}
    return next(iter(importlib.metadata.distributions(name=canonicalize_name(name), **where)), None)


def _project(path: Sequence[str] | None) -> importlib.metadata.Distribution:
    found = _installed(PROJECT, path)
    if found is None:
        raise importlib.metadata.PackageNotFoundError(
            f"{PROJECT} is not installed in this environment ({sys.executable}); "
            f"install it first (pip install --no-deps {PROJECT})")
    return found


def requirements(without: Iterable[str] = (), path: Sequence[str] | None = None) -> list[Requirement]:
    """The installed tfbert's requirements for this interpreter (no extras), less the distributions `without` names.

    Example:
        >>> names = {requirement.name for requirement in requirements(without=["tensorflow", "tensorflow-text"])}
        >>> "keras" in names, "tensorflow" in names
        (True, False)
    """
    left_out = {canonicalize_name(name) for name in without}
    every = (Requirement(line) for line in _project(path).requires or ())
    return [requirement for requirement in every
            if canonicalize_name(requirement.name) not in left_out
            and (requirement.marker is None or requirement.marker.evaluate({"extra": ""}))]


def tensorflow_builds(path: Sequence[str] | None = None) -> list[importlib.metadata.Distribution]:
    """The installed distributions of `TENSORFLOW_BUILDS` (one, where the install is right)."""
    return [found for found in (_installed(name, path) for name in TENSORFLOW_BUILDS) if found is not None]


def _describe(distribution: importlib.metadata.Distribution) -> str:
    return f"{canonicalize_name(distribution.metadata['Name'])} {distribution.version}"


def problems(path: Sequence[str] | None = None) -> list[str]:
    """What is wrong with this environment's TensorFlow for tfbert, one line each; empty when nothing is.

    Checks that exactly one TensorFlow build is installed, that TF-Text is of its release, and that every other
    requirement of tfbert is met (`tensorflow` by whichever build is installed).
    """
    builds = tensorflow_builds(path)
    if len(builds) > 1:
        return [f"{' and '.join(_describe(build) for build in builds)} are installed together; they write "
                f"the same `tensorflow` package, so one has overwritten the other: uninstall them all "
                f"(pip uninstall {' '.join(TENSORFLOW_BUILDS)}) and install one route again ({ROUTES})"]
    if not builds:
        return [f"no TensorFlow is installed (none of {', '.join(TENSORFLOW_BUILDS)}); install one route ({ROUTES})"]
    found = [_unmet(requirement, builds[0], path) for requirement in requirements(path=path)]
    return [line for line in found + [_text_release(builds[0], path)] if line]


def _unmet(requirement: Requirement, build: importlib.metadata.Distribution,
           path: Sequence[str] | None) -> str | None:
    """A line saying how `requirement` is not met, or None (a TensorFlow build stands for `tensorflow`)."""
    name = canonicalize_name(requirement.name)
    installed = build if name == "tensorflow" else _installed(name, path)
    if installed is None:
        return f"{requirement.name} is not installed; tfbert requires {requirement}: pip install '{requirement}'"
    if not requirement.specifier.contains(installed.version, prereleases=True):
        return (f"{_describe(installed)} is installed; tfbert requires {requirement}: "
                f"pip install '{requirement}'" + (f" (or another route: {ROUTES})" if name == "tensorflow" else ""))
    return None


def _text_release(build: importlib.metadata.Distribution, path: Sequence[str] | None) -> str | None:
    """A line saying that TF-Text is not of the TensorFlow build's release, or None."""
    text = _installed(TENSORFLOW_TEXT, path)
    if text is None:
        return None   # `_unmet` names it
    release = Version(build.version).release[:2]
    if Version(text.version).release[:2] == release:
        return None
    wanted = ".".join(map(str, release))
    return (f"{_describe(text)} is installed beside {_describe(build)}; TF-Text's ops load only in the TensorFlow "
            f"release they were built for: pip install --no-deps 'tensorflow-text=={wanted}.*'")


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m tfbert.requirements`: prints the requirements (one a line, for `pip install -r`) or checks them."""
    parser = argparse.ArgumentParser(
        prog="python -m tfbert.requirements",
        description="Print the installed tfbert's requirements, one a line (for pip install -r), or check them.")
    parser.add_argument("--without", nargs="+", default=[], metavar="NAME",
                        help="leave these distributions out (e.g. tensorflow tensorflow-text, on tensorflow-tpu)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1, printing each problem, unless exactly one TensorFlow build is installed, "
                             "TF-Text is of its release and every other requirement is met")
    args = parser.parse_args(argv)
    try:
        return _check() if args.check else _print(args.without)
    except importlib.metadata.PackageNotFoundError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2


def _check() -> int:
    found = problems() or _import_problems()
    for line in found:
        print(f"{PROJECT}: {line}", file=sys.stderr)
    if not found:
        print(f"{PROJECT} {_project(None).version}: {_describe(tensorflow_builds()[0])}, "
              f"{_describe(_installed(TENSORFLOW_TEXT, None))}; every requirement is met")
    return 1 if found else 0


def _import_problems() -> list[str]:
    """A line when TensorFlow does not start (asked in a child process: a libtpu it cannot load aborts it)."""
    started = accelerators.sighting(*accelerators.FRAMEWORKS[0])
    if started.problem is None:
        return []
    return [f"TensorFlow {started.problem}; tensorflow-tpu needs the libtpu it was built with "
            f"(pip install {' '.join(accelerators.TENSORFLOW_TPU)}; {ROUTES})"]


def _print(without: Sequence[str]) -> int:
    for requirement in requirements(without):
        print(requirement)
    return 0


if __name__ == "__main__":
    sys.exit(main())
