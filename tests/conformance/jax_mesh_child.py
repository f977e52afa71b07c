"""The child process of test_jax_mesh.py: every family's pretraining model on Keras' JAX backend, 8 virtual CPUs.

Run with `KERAS_BACKEND=jax XLA_FLAGS=--xla_force_host_platform_device_count=8` (both read at import, hence a
process of its own): `python jax_mesh_child.py VOCAB_SIZE FAMILY...` prints one JSON line, by family:

- `trained`: three steps of `fit` (AdamW) on one device, data parallel over the 8 devices, and on a 2x4 mesh
  with the family's layout (`tfbert.models.layout`): the per-step losses, the largest difference of the
  initial and the trained variables from the one-device run's, how many variables the layout split;
- `rules`: each layout rule's matching variable paths (`layout.rule_matches`; ELECTRA's generator and
  discriminator layers have the same paths, each counted);
- `tpu`: the train step (`model.train_step(state, data)`, Keras' stateless JAX step) exported for TPU with
  `jax.export`, on one device and partitioned over the 2x4 mesh: its platforms and devices, whether every input
  shape is static, the host calls in its module.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import time

# Proof that the JAX route trains without TensorFlow (and Keras' `set_random_seed` imports it only when it can).
sys.modules["tensorflow"] = None

import jax  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402
from conformance_families import pretraining_batch, tiny_config  # noqa: E402

from tfbert.models.fitting import build_optimizer  # noqa: E402
from tfbert.models.layout import keras_distribution, rule_matches  # noqa: E402

BATCH = 8
STEPS = 3
MESH = "2x4"
# What a TPU compile cannot take: a call back into the host's Python, or a host-side op.
HOST_CALLS = re.compile(r"xla_python_cpu_callback|xla_ffi_python_cpu_callback|host_callback|SendToHost|RecvFromHost")


def batches(config) -> tuple[dict, dict]:
    """`STEPS` different batches of `BATCH` rows each, stacked."""
    keras.utils.set_random_seed(0)
    model = config.spec.build_pretraining_model(config, seed=0)
    parts = [pretraining_batch(model, batch=BATCH, seed=step) for step in range(STEPS)]
    return tuple({name: np.concatenate([part[index][name] for part in parts]) for name in parts[0][index]}
                 for index in (0, 1))


def rows(part: dict, step: int) -> dict:
    """Batch `step` of stacked batches."""
    return {name: values[step * BATCH:(step + 1) * BATCH] for name, values in part.items()}


def train(config, data, distribution=None, initial=None) -> dict:
    """Three steps of `fit` under `distribution` (None: one device), from `initial` values of every variable."""
    scope = distribution.scope() if distribution is not None else contextlib.nullcontext()
    with scope:
        keras.utils.set_random_seed(0)
        model = config.spec.build_pretraining_model(config, seed=0)
        start = [np.asarray(variable) for variable in model.variables]
        for variable, value in zip(model.variables, initial or start):
            variable.assign(value)
        model.compile(optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.01), jit_compile=True)
        # One `fit` a step, so each reports its own loss (the train step is compiled once, in the first).
        losses = [model.fit(*(rows(part, step) for part in data), batch_size=BATCH, shuffle=False,
                            verbose=0).history["loss"][0]
                  for step in range(STEPS)]
    split = sum(any(axis is not None for axis in variable.value.sharding.spec) for variable in model.variables
                if hasattr(variable.value.sharding, "spec"))
    return {"model": model, "start": start, "losses": losses, "split": split,
            "final": [np.asarray(variable) for variable in model.variables]}


def largest_difference(first: list[np.ndarray], second: list[np.ndarray]) -> float:
    return max(float(np.max(np.abs(a.astype("float64") - b.astype("float64")), initial=0.0))
               for a, b in zip(first, second))


def exported_for_tpu(model, data, distribution=None) -> dict:
    """The train step exported for TPU (lowered, not compiled: no TPU here), on one device or, under `distribution`,
    partitioned over its mesh with the variables' and the batch's layouts."""
    batch = tuple(rows(part, 0) for part in data)
    with distribution.scope() if distribution is not None else contextlib.nullcontext():
        model._symbolic_build(data_batch=batch)
        build_optimizer(model)
        state = model._get_jax_state(trainable_variables=True, non_trainable_variables=True,
                                     optimizer_variables=True, metrics_variables=True)

        def abstract(array, sharding=None):
            return jax.ShapeDtypeStruct(np.shape(array), array.dtype, sharding=sharding)

        state = jax.tree.map(lambda array: abstract(array, array.sharding if distribution else None), state)
        batch = jax.tree.map(lambda array: abstract(array, distribution.get_data_layout(array.shape).backend_layout
                                                    if distribution else None), batch)
        exported = jax.export.export(jax.jit(model.train_step), platforms=["tpu"])(state, batch)
    module = exported.mlir_module()
    return {"platforms": list(exported.platforms), "devices": exported.nr_devices,
            "static_shapes": all(isinstance(size, int) for aval in exported.in_avals for size in aval.shape),
            "inputs": len(exported.in_avals), "host_calls": sorted(set(HOST_CALLS.findall(module)))}


def check_family(family: str, vocab_size: int) -> dict:
    config = tiny_config(family, vocab_size)
    data = batches(config)
    started = time.process_time()
    reference = train(config, data)
    initial = reference["start"]
    report = {"trained": {"one_device": {"losses": reference["losses"]}}}
    for name, mesh in (("data_parallel", None), (MESH, MESH)):
        distribution = keras_distribution(mesh, config.spec)
        run = train(config, data, distribution, initial)
        report["trained"][name] = {"losses": run["losses"], "split": run["split"],
                                   "initial_difference": largest_difference(run["start"], initial),
                                   "weight_difference": largest_difference(run["final"], reference["final"])}
    report["train_cpu_seconds"] = time.process_time() - started
    paths = [variable.path for variable in reference["model"].variables]
    report["rules"] = {"matches": rule_matches(config.spec, paths)}
    started = time.process_time()
    report["tpu"] = {"one_device": exported_for_tpu(reference["model"], data),
                     MESH: exported_for_tpu(run["model"], data, distribution)}
    report["tpu_cpu_seconds"] = time.process_time() - started
    return report


def main() -> None:
    vocab_size, families = int(sys.argv[1]), sys.argv[2:]
    assert keras.backend.backend() == "jax" and len(jax.devices()) == 8, (keras.backend.backend(), jax.devices())
    print(json.dumps({family: check_family(family, vocab_size) for family in families}))


if __name__ == "__main__":
    main()
