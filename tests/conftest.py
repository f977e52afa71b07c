"""Shared pytest fixtures: quiet TensorFlow logs and locate the real assets."""

import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# `--precision auto` on a CPU follows its bfloat16 instructions; tests state none (float32), so the choice does not
# depend on the machine; `tfbert info` shows stated matmul peaks instead of timing them.
os.environ.setdefault("TFBERT_CPU_BF16", "none")
os.environ.setdefault("TFBERT_MATMUL_PEAKS", "100,100")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # `.ci/run` gives each of the two cores its own worker; one compute thread per worker (and per
    # subprocess it starts) keeps TensorFlow's and PyTorch's pools from fighting over the other core.
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))

import pytest  # noqa: E402

from assets import asset  # noqa: E402


@pytest.fixture(scope="session")
def assets():
    """`assets("minilm/vocab.txt")` gives the path of a fetched asset (see tests/assets.py)."""
    return asset


# Files whose tests share no expensive fixture and each take a minute or more: their tests are spread over
# the workers one by one instead of running on one worker as a whole file.
SPREAD_FILES = {"docs/test_guides.py", "conformance/test_families.py"}


def pytest_configure(config):
    """The workers import TensorFlow once and set its objects aside from the garbage collector, as the `tfbert`
    program does (`tfbert.commands.gc_settings`): full collections otherwise walk them again and again. The
    controller of `-n 2` runs no test and skips it."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    import tensorflow  # noqa: F401

    from tfbert.commands.gc_settings import set_aside_imported_objects

    set_aside_imported_objects()


def pytest_collection_modifyitems(items):
    """Test files with the most `slow` or `end_to_end` tests first, each file's tests kept together and in order.

    `.ci/run` hands files to two xdist workers in collection order (`--dist loadfile
    --no-loadscope-reorder`); starting the longest files first leaves short ones to even out the end,
    instead of one worker finishing a long file alone.
    """
    slow_per_file = Counter(item.path for item in items
                            if item.get_closest_marker("slow") or item.get_closest_marker("end_to_end"))
    items.sort(key=lambda item: -slow_per_file[item.path])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's file-by-file scheduling, except that the tests of `SPREAD_FILES` are scheduled one by one.

    (xdist's own `--dist loadgroup` would say the same with marks, but it does not group under pytest 9.)
    """
    from xdist.scheduler import LoadScopeScheduling

    spread = {f"{TESTS.name}/{path}" for path in SPREAD_FILES}

    class FileOrTestScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return nodeid if path in spread else path

    return FileOrTestScheduling(config, log)


def pytest_terminal_summary(terminalreporter):
    """After a run of the docs tests: how many guide code blocks ran, and each skipped one with its reason."""
    ran = any(getattr(report, "nodeid", "").startswith("tests/docs/test_guides.py")
              for reports in terminalreporter.stats.values() for report in reports)
    if not ran:
        return
    sys.path.insert(0, str(Path(__file__).parent / "docs"))
    from guide_blocks import RUN, all_blocks

    every = [block for block in all_blocks() if block.language in RUN]
    skipped = [block for block in every if block.skip]
    terminalreporter.section("documentation code blocks")
    terminalreporter.write_line(f"{len(every) - len(skipped)} run, {len(skipped)} skipped:")
    for block in skipped:
        terminalreporter.write_line(f"  {block.page}:{block.line}: {block.skip}")
