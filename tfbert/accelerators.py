"""The accelerators attached to this machine, which framework sees them, and the backend `auto` trains on.

Cheap first: what shows an attached TPU or GPU comes from device files and environment variables
(`evidence`), and only where there is some are TensorFlow and JAX asked which chips they see (`sightings`).
Each asks in a child process unless this process imported it already: `tensorflow-tpu` with a `libtpu` it
cannot load aborts the process that imports it, and a child that opened the chips lets them go when it exits.

    >>> resolve_backend("tensorflow")
    'tensorflow'
    >>> print(describe(Evidence()).splitlines()[0])  # doctest: +ELLIPSIS
    accelerators: none attached (no /dev/accel*, /dev/vfio/*, ...)
"""

from __future__ import annotations

import dataclasses
import glob
import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable

BACKENDS = ("auto", "tensorflow", "jax")
# What shows an attached TPU: its device files (TPU VMs: /dev/accel<n>, or /dev/vfio/<n> beside /dev/vfio/vfio)
# and the variables Cloud TPU and Colab set.
TPU_FILES = ("/dev/accel*", "/dev/vfio/*")
TPU_VARIABLES = ("TPU_NAME", "TPU_ACCELERATOR_TYPE", "COLAB_TPU_ADDR")
GPU_FILES = ("/dev/nvidia[0-9]*",)
CHIP_KINDS = ("TPU", "GPU")
# jax.Device.platform -> the kind of chip.
JAX_PLATFORMS = {"tpu": "TPU", "gpu": "GPU", "cuda": "GPU", "rocm": "GPU"}
ROUTES_SECTION = 'docs/distributed.md, "Installing for TPUs and GPUs"'
# The last TensorFlow built for TPUs, and the libtpu it loads (pip picks libtpu 0.0.52 for it, whose import aborts
# with "ConfigureDistributedTpuOp_DoWork not available in this library"); the section's install block pins these.
TENSORFLOW_TPU = ("tensorflow-tpu==2.20.0", "libtpu==0.0.14")
INSTALL_JAX = 'pip install "jax[tpu]" on a TPU VM, pip install "jax[cuda12]" on GPUs, pip install jax on a CPU'
# A framework's first import on a TPU VM may initialise the chips: seconds, rarely a minute.
PROBE_TIMEOUT_S = 180


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What shows an attached accelerator: device files and variables, per kind of chip.

    Example:
        >>> Evidence(tpu=("/dev/accel0",)).kinds
        ('TPU',)
    """

    tpu: tuple[str, ...] = ()
    gpu: tuple[str, ...] = ()

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of chip attached ("TPU", "GPU"), in `CHIP_KINDS` order."""
        return tuple(kind for kind, shown in zip(CHIP_KINDS, (self.tpu, self.gpu)) if shown)


@dataclasses.dataclass(frozen=True)
class Sighting:
    """The chips one framework sees, by kind, or why it could not be asked (`problem`, one line).

    Example:
        >>> Sighting("JAX", {"TPU": 4, "GPU": 0}).sees(("TPU",))
        True
    """

    framework: str
    chips: dict[str, int] = dataclasses.field(default_factory=dict)
    problem: str | None = None

    def sees(self, kinds: tuple[str, ...]) -> bool:
        """Whether it sees at least one chip of one of `kinds`."""
        return any(self.chips.get(kind, 0) for kind in kinds)

    def describe(self) -> str:
        if self.problem:
            return f"{self.framework}: {self.problem}"
        return f"{self.framework} sees " + ", ".join(f"{self.chips.get(kind, 0)} {kind}" for kind in CHIP_KINDS)


def evidence() -> Evidence:
    """The device files and variables of this machine that show an attached TPU or GPU (no import, no process)."""
    tpu_files = [path for pattern in TPU_FILES for path in sorted(glob.glob(pattern))
                 if path != "/dev/vfio/vfio"]   # the VFIO container, on any machine with the module loaded
    variables = [f"{name}={os.environ[name]}" for name in TPU_VARIABLES if os.environ.get(name)]
    gpu_files = [path for pattern in GPU_FILES for path in sorted(glob.glob(pattern))]
    return Evidence(tpu=tuple(tpu_files + variables), gpu=tuple(gpu_files))


def tensorflow_chips() -> dict[str, int]:
    """The TPU and GPU chips TensorFlow sees, in this process (imports TensorFlow)."""
    import tensorflow as tf

    return {kind: len(tf.config.list_physical_devices(kind)) for kind in CHIP_KINDS}


def jax_chips() -> dict[str, int]:
    """The TPU and GPU chips JAX sees, in this process (imports JAX)."""
    import jax

    kinds = [JAX_PLATFORMS.get(device.platform) for device in jax.devices()]
    return {kind: kinds.count(kind) for kind in CHIP_KINDS}


# The frameworks `sightings` asks: (name in the report, module, the function that counts the chips).
FRAMEWORKS = (("TensorFlow", "tensorflow", tensorflow_chips), ("JAX", "jax", jax_chips))


def sighting(framework: str, module: str, count: Callable[[], dict[str, int]]) -> Sighting:
    """What `framework` sees: asked here if `module` is imported already, else in a child process."""
    if module in sys.modules:
        try:
            return Sighting(framework, count())
        except Exception as error:   # a broken runtime is a line of the report, not a traceback
            return Sighting(framework, problem=f"cannot list its devices: {type(error).__name__}: {error}")
    if importlib.util.find_spec(module) is None:
        return Sighting(framework, problem="not installed" + ("" if module != "jax" else f" ({INSTALL_JAX})"))
    return _ask_a_child(framework, count.__name__)


def _ask_a_child(framework: str, function: str) -> Sighting:
    """Runs `tfbert.accelerators.<function>()` in a new interpreter, which prints the chips as JSON."""
    # This tfbert first on the child's path, whether it is installed or a checkout.
    paths = [str(Path(__file__).resolve().parents[1])] + [os.environ.get("PYTHONPATH") or ""]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths)),
                   "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "3")}
    code = f"import json; from tfbert.accelerators import {function}; print(json.dumps({function}()))"
    try:
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment,
                               timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Sighting(framework, problem=f"did not list its devices within {PROBE_TIMEOUT_S} s")
    if child.returncode == 0:
        return Sighting(framework, json.loads(child.stdout.strip().splitlines()[-1]))
    last = next((line.strip() for line in reversed(child.stderr.splitlines()) if line.strip()), "no message")
    status = (f"killed by {signal.Signals(-child.returncode).name}" if child.returncode < 0
              else f"exit status {child.returncode}")
    return Sighting(framework, problem=f"fails to start ({status}): {last[-300:]}")


def sightings() -> tuple[Sighting, ...]:
    """What TensorFlow and JAX each see (a child process each, unless imported here already)."""
    return tuple(sighting(*framework) for framework in FRAMEWORKS)


def resolve_backend(requested: str = "auto") -> str:
    """The Keras backend to train on, "tensorflow" or "jax", for `--backend REQUESTED`.

    `auto`: `KERAS_BACKEND` where it names one of the two; else JAX where an accelerator is attached and only
    JAX sees it; else TensorFlow. Without an attached accelerator nothing is imported. A named backend must be
    installed (ValueError saying how to install it).

    Example:
        >>> resolve_backend("auto") in ("tensorflow", "jax")
        True
    """
    if requested not in BACKENDS:
        raise ValueError(f"backend {requested!r} is not one of {', '.join(BACKENDS)}")
    if requested == "auto":
        found = evidence()
        requested = auto_backend(found, sightings() if found.kinds and not _stated_backend() else ())
    if importlib.util.find_spec(requested) is None:
        install = INSTALL_JAX if requested == "jax" else "pip install tensorflow"
        raise ValueError(f"backend {requested} needs {requested}, which is not installed in this environment "
                         f"({sys.executable}): {install} ({ROUTES_SECTION})")
    return requested


def _stated_backend() -> str | None:
    stated = os.environ.get("KERAS_BACKEND")
    return stated if stated in ("tensorflow", "jax") else None


def auto_backend(found: Evidence, seen: tuple[Sighting, ...]) -> str:
    """What `auto` picks, given what is attached and what TensorFlow and JAX see (`seen`, in `FRAMEWORKS` order;
    asked only where something is attached): `KERAS_BACKEND`, else "jax" where only JAX sees an attached chip.

    Example:
        >>> seen = (Sighting("TensorFlow", {"TPU": 0}), Sighting("JAX", {"TPU": 4}))
        >>> auto_backend(Evidence(tpu=("/dev/accel0",)), seen)
        'jax'
    """
    if _stated_backend() or not found.kinds:
        return _stated_backend() or "tensorflow"
    tensorflow, jax = seen
    return "jax" if jax.sees(found.kinds) and not tensorflow.sees(found.kinds) else "tensorflow"


def describe(found: Evidence, seen: tuple[Sighting, ...] = ()) -> str:
    """The lines `tfbert info` prints: what is attached, what each framework sees, the route and `auto`'s pick."""
    picked = f"--backend auto: {auto_backend(found, seen)}"
    if _stated_backend():
        picked += f" (KERAS_BACKEND={_stated_backend()})"
    if not found.kinds:
        where = ", ".join(TPU_FILES + GPU_FILES + TPU_VARIABLES)
        return f"accelerators: none attached (no {where})\n{picked}"
    lines = [f"{kind} attached: {', '.join(found.tpu if kind == 'TPU' else found.gpu)}" for kind in found.kinds]
    lines += [f"  {framework.describe()}" for framework in seen]
    return "\n".join(lines + [f"  route: {_route(found.kinds, *seen)}", picked])


def _route(kinds: tuple[str, ...], tensorflow: Sighting, jax: Sighting) -> str:
    if tensorflow.sees(kinds):
        also = "; JAX sees them too: --backend jax trains on JAX" if jax.sees(kinds) else ""
        return f"TensorFlow{also}"
    if jax.sees(kinds):
        return f"JAX, as only JAX sees the {' and '.join(kinds)}: --backend jax, which auto picks ({ROUTES_SECTION})"
    chips = " and ".join(kinds)
    install = ('JAX (TPU v5e, v5p, v6e and newer): pip install "jax[tpu]"; TensorFlow (TPU v2, v3, v4): '
               f"{' with '.join(TENSORFLOW_TPU)}" if "TPU" in kinds else
               'JAX: pip install "jax[cuda12]"; TensorFlow: pip install "tensorflow[and-cuda]"')
    return f"neither TensorFlow nor JAX sees the attached {chips}: install a route ({ROUTES_SECTION}): {install}"


def report() -> tuple[str, Sighting | None]:
    """`describe`'s lines for this machine, and TensorFlow's sighting where it was asked (None where not)."""
    found = evidence()
    seen = sightings() if found.kinds else ()
    return describe(found, seen), (seen[0] if seen else None)
