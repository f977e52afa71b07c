"""Every registered family on Keras' JAX backend, without a TPU: the proofs of the JAX route (issue 42, item 4).

- three `fit` steps on 8 virtual CPU devices, data parallel and on a 2x4 mesh with the family's layout
  (`ArchitectureSpec.layout`, `tfbert.models.layout`), give the one-device losses and weights (1e-5);
- the train step (Keras' stateless `train_step(state, data)`) exports for TPU with `jax.export`, on one device
  and partitioned over the 2x4 mesh: static shapes, no call back into the host;
- every layout rule matches a variable of the family's pretraining model, and no variable matches two.

The JAX backend and the 8 devices are fixed when JAX and Keras are imported, so a child process
(`jax_mesh_child.py`, TensorFlow made unimportable) runs each family once, for all its tests here.
A family gets these checks by registering (docs/conformance.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tfbert import architectures
from tfbert.models.layout import rule_matches

CHILD = Path(__file__).with_name("jax_mesh_child.py")
TOLERANCE = 1e-5
# Level 0 spares LLVM's optimisation of the steps' code (a third of the child's CPU time); the runs compared
# are all compiled alike.
XLA_FLAGS = "--xla_force_host_platform_device_count=8 --xla_backend_optimization_level=0"


# The child's report by family, made once a family by the first test that asks (the tests of a file run in one
# process, in order; `tests/conftest.py` does not spread this file).
_REPORTS: dict[str, dict] = {}


@pytest.fixture
def jax_run(family, wordpiece):
    """The child's report for `family`: {"trained", "rules", "tpu", ...} (about 25-60 CPU-seconds, once)."""
    if family not in _REPORTS:
        environment = {**os.environ, "KERAS_BACKEND": "jax", "XLA_FLAGS": XLA_FLAGS, "TF_CPP_MIN_LOG_LEVEL": "3",
                       "PYTHONPATH": os.pathsep.join([str(CHILD.parent), *sys.path])}
        command = [sys.executable, str(CHILD), str(wordpiece.vocabulary_size()), family]
        result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=540)
        assert result.returncode == 0, result.stderr[-6000:]
        _REPORTS.update(json.loads(result.stdout.strip().splitlines()[-1]))
    return _REPORTS[family]


@pytest.mark.slow
@pytest.mark.parametrize("run", ["data_parallel", "2x4"])
def test_pretraining_model_trains_on_8_devices_as_on_one(jax_run, run):
    trained = jax_run["trained"]
    one_device, spread = np.array(trained["one_device"]["losses"]), np.array(trained[run]["losses"])
    assert len(one_device) == 3 and np.isfinite(one_device).all() and len(set(one_device.tolist())) == 3
    np.testing.assert_allclose(spread, one_device, atol=TOLERANCE, rtol=0)
    assert trained[run]["initial_difference"] == 0.0              # the same seed initialises alike on a mesh
    assert trained[run]["weight_difference"] <= TOLERANCE
    split = sum(map(len, jax_run["rules"]["matches"].values()))
    # Data parallel replicates every variable; the 2x4 mesh splits each one a rule names.
    assert trained[run]["split"] == (0 if run == "data_parallel" else split) and split > 0


@pytest.mark.slow
@pytest.mark.parametrize("run, devices", [("one_device", 1), ("2x4", 8)])
def test_train_step_exports_for_tpu_with_static_shapes_and_no_host_calls(jax_run, run, devices):
    """On one device, and partitioned over the 2x4 mesh as a TPU slice of 8 chips would run it."""
    exported = jax_run["tpu"][run]
    assert exported["platforms"] == ["tpu"] and exported["devices"] == devices and exported["static_shapes"]
    assert exported["host_calls"] == [] and exported["inputs"] > 0


def test_every_layout_rule_matches_a_variable_and_none_matches_two(config):
    """A rule that matches nothing has rotted (a variable renamed); Keras refuses a path under two rules."""
    model = config.spec.build_pretraining_model(config, seed=0)
    variables = {variable.path: variable for variable in model.variables}
    matches = rule_matches(config.spec, variables)
    assert not [rule for rule, paths in matches.items() if not paths], f"{config.architecture}: rules matching nothing"
    paths = [path for matched in matches.values() for path in matched]
    assert len(paths) == len(set(paths)), f"{config.architecture}: variables under two rules"
    axes = dict(config.spec.layout)
    for rule, matched in matches.items():
        assert all(len(variables[path].shape) == len(axes[rule]) for path in matched), rule

