"""The registry is the one list of families: installed ones come from entry points, and the Keras classes,
the exports and the shipped configs all come from the specs."""

import dataclasses

import keras
import pytest

import tfbert
from tfbert import architectures, keras_classes, models
from tfbert.architectures.configs import shipped_configs


def install_entry_point(folder, monkeypatch, line: str, distribution: str = "brokenfam") -> None:
    """A distribution `distribution` on `sys.path` whose only entry point in `tfbert.families` is `line`."""
    info = folder / f"{distribution}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[tfbert.families]\n{line}\n")
    monkeypatch.syspath_prepend(str(folder))


def test_an_entry_point_that_does_not_load_names_itself_and_its_distribution(tmp_path, monkeypatch):
    install_entry_point(tmp_path, monkeypatch, "broken = nowhere_at_all.spec:SPEC")
    with pytest.raises(ImportError, match=r"tfbert family entry point broken = nowhere_at_all.spec:SPEC \(group "
                                          r"tfbert.families, distribution brokenfam\) does not load: "
                                          r"ModuleNotFoundError: .*; fix or uninstall that distribution"):
        architectures.installed_families()


@pytest.mark.parametrize("line, found", [("albert = tfbert.families.bert.spec:SPEC", "architecture 'bert'"),
                                         ("notaspec = tfbert.architectures.spec:MLM_PRETRAINING_MODEL", "str")],
                         ids=["another_name", "not_a_spec"])
def test_an_entry_point_must_name_the_spec_of_its_own_name(tmp_path, monkeypatch, line, found):
    install_entry_point(tmp_path, monkeypatch, line)
    name = line.split(" = ")[0]
    with pytest.raises(ValueError, match=f"names {found}; expected the ArchitectureSpec of architecture '{name}'"):
        architectures.installed_families()


@pytest.fixture
def later_family():
    """A family registered after Keras is imported, with a Keras class in a module nobody has imported."""
    spec = dataclasses.replace(architectures.get("bert"), name="later", package="",
                               keras_classes=("nowhere_yet.models:LaterPretrainingModel",))
    architectures.register(spec)
    yield spec
    architectures.unregister("later")
    keras.saving.get_custom_objects().pop("tfbert>LaterPretrainingModel", None)


def test_a_family_registered_after_keras_is_imported_gets_its_keras_stand_ins(later_family):
    stand_in = keras.saving.get_custom_objects()["tfbert>LaterPretrainingModel"]
    assert (type(stand_in).__name__, stand_in.module) == ("_StandIn", "nowhere_yet.models")
    assert keras_classes.classes()["nowhere_yet.models"] == ("LaterPretrainingModel",)


def test_the_exports_are_the_specs_keras_classes(later_family):
    specs = {path for name in architectures.names() for path in architectures.get(name).keras_classes}
    assert set(architectures.family_classes().values()) == specs
    assert {"DebertaRTDModel", "ElectraPretrainingModel", "LaterPretrainingModel"} <= set(tfbert.__all__)
    assert set(architectures.family_classes()) <= set(models.__all__) & set(dir(tfbert))
    assert tfbert.DebertaRTDModel is models.DebertaRTDModel


def test_two_families_shipping_one_config_name_is_an_error():
    architectures.register(dataclasses.replace(architectures.get("bert"), name="bert_again"))
    try:
        with pytest.raises(ValueError, match=r"config 'bert_base' is shipped by two families, bert "
                                             r"\(tfbert/families/bert/configs/bert_base.yaml\) and bert_again"):
            shipped_configs()
    finally:
        architectures.unregister("bert_again")
