"""`tfbert.accelerators`: the evidence of attached chips, what TensorFlow and JAX see, the backend `auto` picks and
the route `tfbert info` names; probes and evidence are faked here (no TPU), the child processes are real."""

import subprocess
import sys
import textwrap
import types

import pytest

from tfbert import accelerators
from tfbert.accelerators import Evidence, Sighting, resolve_backend
from tfbert.cli import main
from tfbert.distribute import tpu_is_detectable

TPU = Evidence(tpu=("/dev/accel0", "TPU_ACCELERATOR_TYPE=v4-8"))
GPU = Evidence(gpu=("/dev/nvidia0",))


def seen(tensorflow: dict | str, jax: dict | str) -> tuple[Sighting, Sighting]:
    """TensorFlow's and JAX's sightings: chips by kind, or a problem line."""
    return tuple(Sighting(name, problem=found) if isinstance(found, str) else Sighting(name, found)
                 for name, found in (("TensorFlow", tensorflow), ("JAX", jax)))


@pytest.fixture
def machine(monkeypatch):
    """Sets what this machine shows (`machine(evidence, sightings)`); asking a framework without evidence fails."""
    monkeypatch.delenv("KERAS_BACKEND", raising=False)

    def set_up(found: Evidence, sightings=None):
        def asked():
            assert sightings is not None, "a framework was asked although nothing is attached"
            return sightings
        monkeypatch.setattr(accelerators, "evidence", lambda: found)
        monkeypatch.setattr(accelerators, "sightings", asked)
    return set_up


def test_evidence_is_the_device_files_and_the_variables(monkeypatch):
    files = {"/dev/accel*": ["/dev/accel1", "/dev/accel0"], "/dev/vfio/*": ["/dev/vfio/vfio", "/dev/vfio/0"],
             "/dev/nvidia[0-9]*": ["/dev/nvidia0"]}
    monkeypatch.setattr(accelerators.glob, "glob", lambda pattern: files[pattern])
    monkeypatch.setenv("TPU_NAME", "my-tpu")
    monkeypatch.delenv("TPU_ACCELERATOR_TYPE", raising=False)
    monkeypatch.delenv("COLAB_TPU_ADDR", raising=False)
    found = accelerators.evidence()
    assert found == Evidence(tpu=("/dev/accel0", "/dev/accel1", "/dev/vfio/0", "TPU_NAME=my-tpu"),
                             gpu=("/dev/nvidia0",))
    assert found.kinds == ("TPU", "GPU") and tpu_is_detectable()
    files.update({"/dev/accel*": [], "/dev/vfio/*": ["/dev/vfio/vfio"]})   # the VFIO container alone is no TPU
    monkeypatch.delenv("TPU_NAME")
    assert accelerators.evidence() == GPU and not tpu_is_detectable()


def test_auto_without_an_accelerator_imports_neither_framework():
    code = textwrap.dedent("""
        import sys
        import tfbert.accelerators as accelerators
        accelerators.evidence = lambda: accelerators.Evidence()
        print(accelerators.resolve_backend("auto"), "tensorflow" in sys.modules, "jax" in sys.modules)
    """)
    environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=True)
    assert child.stdout.split() == ["tensorflow", "False", "False"]


@pytest.mark.parametrize("found, sightings, backend", [
    (TPU, seen({"TPU": 0}, {"TPU": 8}), "jax"),
    (TPU, seen({"TPU": 8}, {"TPU": 8}), "tensorflow"),
    (TPU, seen({"TPU": 0}, "not installed"), "tensorflow"),
    (TPU, seen("fails to start (killed by SIGABRT): libtpu", {"TPU": 4}), "jax"),
    (GPU, seen({"GPU": 0}, {"GPU": 1}), "jax"),
    (GPU, seen({"GPU": 1}, {"TPU": 0, "GPU": 0}), "tensorflow"),
], ids=["only-jax-sees-the-tpu", "both-see-it", "no-jax", "tensorflow-aborts", "only-jax-sees-the-gpu",
        "tensorflow-sees-the-gpu"])
def test_auto_picks_jax_only_where_jax_alone_sees_the_attached_chips(machine, found, sightings, backend):
    machine(found, sightings)
    assert resolve_backend("auto") == backend == resolve_backend()


def test_auto_takes_keras_backend_first_and_asks_nothing(machine, monkeypatch):
    machine(TPU)
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    assert resolve_backend("auto") == "jax"
    monkeypatch.setenv("KERAS_BACKEND", "torch")   # not a backend tfbert trains on: auto decides
    machine(Evidence())
    assert resolve_backend("auto") == "tensorflow"


def test_named_backends_are_checked(machine, monkeypatch):
    machine(TPU)
    assert resolve_backend("tensorflow") == "tensorflow" and resolve_backend("jax") == "jax"
    with pytest.raises(ValueError, match="backend 'torch' is not one of auto, tensorflow, jax"):
        resolve_backend("torch")
    real_find_spec = accelerators.importlib.util.find_spec
    monkeypatch.setattr(accelerators.importlib.util, "find_spec",
                        lambda name: None if name == "jax" else real_find_spec(name))
    with pytest.raises(ValueError, match=r'backend jax needs jax, which is not installed .*pip install "jax\[tpu\]" '
                                         r"on a TPU VM.*pip install jax on a CPU"):
        resolve_backend("jax")


def _fake_package(folder, name: str, code: str) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(textwrap.dedent(code))


def test_a_framework_is_asked_in_a_child_whose_abort_becomes_a_line(tmp_path, monkeypatch):
    _fake_package(tmp_path, "tensorflow", """
        import os, resource, sys
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))   # no core file
        print("F tpu_library_init_fns.inc:12] ConfigureDistributedTpuOp_DoWork not available", file=sys.stderr)
        os.abort()
    """)
    _fake_package(tmp_path, "jax", """
        from types import SimpleNamespace
        def devices():
            return [SimpleNamespace(platform="tpu") for _ in range(4)]
    """)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    aborted = accelerators._ask_a_child("TensorFlow", "tensorflow_chips")
    assert aborted == Sighting("TensorFlow", problem="fails to start (killed by SIGABRT): F tpu_library_init_fns."
                                                     "inc:12] ConfigureDistributedTpuOp_DoWork not available")
    assert accelerators._ask_a_child("JAX", "jax_chips") == Sighting("JAX", {"TPU": 4, "GPU": 0})


def test_a_framework_imported_here_is_asked_here_and_a_failure_is_a_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "fake_framework", types.ModuleType("fake_framework"))

    def broken():
        raise RuntimeError("Unable to initialize backend 'tpu'")

    assert accelerators.sighting("JAX", "fake_framework", lambda: {"TPU": 2}) == Sighting("JAX", {"TPU": 2})
    assert accelerators.sighting("JAX", "fake_framework", broken).problem == (
        "cannot list its devices: RuntimeError: Unable to initialize backend 'tpu'")
    assert accelerators.sighting("JAX", "no_such_framework_here", broken).problem.startswith("not installed")


def test_the_route_for_each_case_names_what_to_install_or_pass():
    neither = accelerators.describe(TPU, seen({"TPU": 0}, "not installed (pip install ...)"))
    assert neither.splitlines() == [
        "TPU attached: /dev/accel0, TPU_ACCELERATOR_TYPE=v4-8",
        "  TensorFlow sees 0 TPU, 0 GPU",
        "  JAX: not installed (pip install ...)",
        '  route: neither TensorFlow nor JAX sees the attached TPU: install a route (docs/distributed.md, "Installing '
        'for TPUs and GPUs"): JAX (TPU v5e, v5p, v6e and newer): pip install "jax[tpu]"; TensorFlow (TPU v2, v3, '
        'v4): tensorflow-tpu==2.20.0 with libtpu==0.0.14',
        "--backend auto: tensorflow"]
    both = accelerators.describe(TPU, seen({"TPU": 4}, {"TPU": 4})).splitlines()
    assert both[-2:] == ["  route: TensorFlow; JAX sees them too: --backend jax trains on JAX",
                         "--backend auto: tensorflow"]
    gpu = accelerators.describe(GPU, seen({"GPU": 0}, "not installed")).splitlines()
    assert gpu[-2].endswith('JAX: pip install "jax[cuda12]"; TensorFlow: pip install "tensorflow[and-cuda]"')
    assert accelerators.describe(Evidence()).startswith("accelerators: none attached (no /dev/accel*, /dev/vfio/*, ")


def test_info_prints_the_route(machine, capsys):
    machine(Evidence())
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "\naccelerators: none attached (no /dev/accel*" in out and "\n--backend auto: tensorflow\n" in out
    machine(TPU, seen({"TPU": 0}, {"TPU": 8}))
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "\n  JAX sees 8 TPU, 0 GPU\n  route: JAX, as only JAX sees the TPU: --backend jax" in out
    assert "\n--backend auto: jax\n" in out and "\nstrategy auto: " in out


def test_info_stops_with_one_line_where_tensorflow_cannot_start(machine, capsys):
    machine(TPU, seen("fails to start (killed by SIGABRT): ConfigureDistributedTpuOp_DoWork", "not installed"))
    assert main(["info"]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("TPU attached: /dev/accel0") and "strategy auto" not in captured.out
    assert captured.err.strip() == (
        "tfbert info: error: TensorFlow cannot start in this environment: fails to start (killed by SIGABRT): "
        'ConfigureDistributedTpuOp_DoWork; install a route (docs/distributed.md, "Installing for TPUs and GPUs")')


def test_info_for_real_names_no_accelerator_on_this_machine(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith(("accelerators:", "TPU attached", "GPU attached"))]
    assert lines and (lines[0].startswith("accelerators: none attached") == (not accelerators.evidence().kinds))
    assert f"\n--backend auto: {resolve_backend()}" in out
