"""The install routes of docs/distributed.md: the shell block right after each `<!-- install: NAME -->` line, which
`.ci/install_routes` runs in a fresh environment (the guide runner skips it), and the page's example of `tfbert info`.
"""

import re
import subprocess

import pytest
from guide_blocks import INSTALL_PAGE, ROOT, blocks, install_block

from tfbert import accelerators
from tfbert.accelerators import Evidence, Sighting

CI_SCRIPT = ROOT / ".ci" / "install_routes"
ROUTES = re.findall(r"^\s*route (\S+)", CI_SCRIPT.read_text(encoding="utf-8"), flags=re.M)


def test_ci_runs_every_route_of_the_page():
    assert sorted(ROUTES) == ["tpu-jax", "tpu-tensorflow"]
    assert sorted(block.install for block in blocks(INSTALL_PAGE) if block.install) == sorted(ROUTES)


@pytest.mark.parametrize("name", ROUTES)
def test_each_route_is_a_bash_block_that_parses_installs_tfbert_as_the_variable_and_checks(name):
    block = install_block(name)
    assert block.language == "bash" and block.skip and not block.runs   # the guide runner leaves it to CI
    syntax = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    lines = block.code.splitlines()
    assert lines[0] == 'TFBERT="${TFBERT:-tfbert}"' and '"$TFBERT"' in block.code
    assert lines[-1] == "python -m tfbert.requirements --check"


def test_the_tensorflow_route_keeps_pip_from_adding_the_tensorflow_wheel():
    lines = install_block("tpu-tensorflow").code.splitlines()
    assert lines[1] == f"pip install {' '.join(accelerators.TENSORFLOW_TPU)}"
    installs = [line for line in lines if line.startswith("pip install")]
    # Whatever requires `tensorflow` goes in without its requirements; the rest comes from tfbert's own list.
    assert "pip install --no-deps tensorflow-text==2.20.1" in installs and 'pip install --no-deps "$TFBERT"' in installs
    assert installs[-1] == "pip install -r <(python -m tfbert.requirements --without tensorflow tensorflow-text)"
    assert not [line for line in installs if "$TFBERT" in line and "--no-deps" not in line]


def test_the_jax_route_installs_tfbert_with_jax_for_tpus():
    assert 'pip install "$TFBERT" "jax[tpu]"' in install_block("tpu-jax").code.splitlines()


def test_the_markers_stand_right_above_the_fence_in_either_order(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- install: a -->\n<!-- skip: CI runs it -->\n```bash\necho a\n```\n\n"
                    "<!-- skip: CI runs it -->\n<!-- install: b -->\n```bash\necho b\n```\n\n"
                    "<!-- install: c -->\n\n```bash\necho c\n```\n", encoding="utf-8")
    assert [(block.install, block.skip) for block in blocks(page)] == [("a", "CI runs it"), ("b", "CI runs it"),
                                                                       (None, None)]
    assert install_block("b", page).code == "echo b\n"
    with pytest.raises(KeyError, match=r"no block after <!-- install: c -->; its routes: \['a', 'b'\]"):
        install_block("c", page)


def test_the_routes_section_is_the_one_the_messages_name():
    heading = re.search(r'"(.*)"$', accelerators.ROUTES_SECTION)[1]
    assert f"\n## {heading}\n" in INSTALL_PAGE.read_text(encoding="utf-8")


def test_the_page_s_info_example_is_what_info_prints_for_it(monkeypatch):
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    page = INSTALL_PAGE.read_text(encoding="utf-8")
    example = re.search(r"report reads \(.*?\):\n\n```text\n(.*?)```", page, flags=re.S)[1]
    found = Evidence(tpu=tuple(f"/dev/vfio/{index}" for index in range(4)) + ("TPU_ACCELERATOR_TYPE=v5litepod-4",))
    seen = (Sighting("TensorFlow", {"TPU": 0, "GPU": 0}), Sighting("JAX", {"TPU": 4, "GPU": 0}))
    assert accelerators.describe(found, seen) + "\n" == example


def test_the_readme_names_both_routes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/distributed.md#installing-for-tpus-and-gpus)" in readme and "--backend jax" in readme
