"""`tfbert.models.layout`: `--mesh DATAxMODEL` to a Keras distribution with the family's layout, and its refusals.

Training on a mesh, per family, is tests/conformance/test_jax_mesh.py."""

import dataclasses
from pathlib import Path

import pytest

from tfbert import architectures
from tfbert.models.layout import MESH_AXES, keras_distribution, parse_mesh

DEVICES = [f"cpu:{index}" for index in range(8)]


@pytest.mark.parametrize("mesh", [None, "8x1", (8, 1)])
def test_no_mesh_or_a_model_axis_of_one_is_data_parallel_over_every_device(mesh):
    distribution = keras_distribution(mesh, architectures.get("bert"), devices=DEVICES)
    assert type(distribution).__name__ == "DataParallel" and distribution.device_mesh.shape == (8,)


def test_a_model_axis_splits_the_variables_the_family_names_and_batches_on_data():
    spec = architectures.get("albert")
    distribution = keras_distribution("2x4", spec, devices=DEVICES)
    assert type(distribution).__name__ == "ModelParallel" and distribution.batch_dim_name == "data"
    assert distribution.device_mesh.shape == (2, 4) and tuple(distribution.device_mesh.axis_names) == MESH_AXES
    layouts = distribution._layout_map
    assert layouts["embedding_projection/kernel"].axes == ("model", None)               # ALBERT's own rule
    assert layouts["group0_inner0_ffn/intermediate/kernel"].axes == (None, "model")     # the shared ones
    assert layouts["group0_inner0_attention/output/kernel"].axes == ("model", None)
    assert layouts["pooler/kernel"] is None                                             # replicated


@pytest.mark.parametrize("mesh", ["2*4", "2x", "0x8", "x4", "2x4x1", (2, 4, 1), ("2", "4"), 8])
def test_a_mesh_that_is_not_two_positive_numbers_is_refused_naming_the_flag(mesh):
    with pytest.raises(ValueError, match=r"^--mesh .*expected DATAxMODEL"):
        parse_mesh(mesh)


def test_a_mesh_of_another_device_count_is_refused_with_the_count():
    with pytest.raises(ValueError, match=r"^--mesh '2x2': 2 x 2 = 4 devices, but there are 8 .* DATA x MODEL is 8$"):
        keras_distribution("2x2", architectures.get("bert"), devices=DEVICES)


@pytest.mark.parametrize("layout", [(("kernel", ("model", "tensor")),), (("(", (None,)),), (("kernel",),)])
def test_a_spec_with_a_bad_layout_rule_is_refused(layout):
    with pytest.raises(ValueError, match="^architecture 'bert': layout rule"):
        dataclasses.replace(architectures.get("bert"), layout=layout)


def test_the_layout_table_of_docs_distributed_lists_every_familys_rules():
    """docs/distributed.md's table: one row per rule, its axes and the families (registry names, or `all`) having it."""
    page = (Path(__file__).parents[2] / "docs" / "distributed.md").read_text(encoding="utf-8")
    rows = [line.split(" | ") for line in page.splitlines() if line.startswith("| `") and "/" in line.split(" | ")[0]]
    documented = {row[0].strip("| `").replace("\\|", "|"): row[3].strip(" |") for row in rows}
    having: dict[str, list[str]] = {}
    for name in architectures.names():
        for pattern, _ in architectures.get(name).layout:
            having.setdefault(pattern, []).append(name)
    names = {pattern: "all" if len(families) == len(architectures.names()) else ", ".join(families)
             for pattern, families in having.items()}
    assert documented == names
