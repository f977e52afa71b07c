"""Every ```python and ```bash block of README.md and docs/*.md runs, page by page, on tiny configs.

Each page runs in its own temporary folder (`run_page.py`), in a fork of the worker's command server
(`tests/command_server.py`: one import of tfbert's stack per worker, not two per page), and so do its `tfbert`
commands; a page whose Python sets `os.environ` (before TensorFlow is imported, as `tf-hub.md` does for tf_keras)
runs in a fresh interpreter instead, its commands still in the server. The folder holds what a reader would have
downloaded, from the test assets: `all-MiniLM-L6-v2/` (a Hugging Face folder), `gpt2.tiktoken`, `spiece.model`
(a SentencePiece unigram model) and `ko_corpus.txt` (the Korean constitution). Blocks marked
`<!-- skip: reason -->` are skipped and listed at the end of the run (`tests/conftest.py`).
"""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import command_server
import pytest
from guide_blocks import all_blocks, pages, blocks

pytestmark = pytest.mark.end_to_end

HERE = Path(__file__).parent
# What a reader would have downloaded: the name in the page's folder -> a test asset (a folder by one of its files).
FOLDERS = {"all-MiniLM-L6-v2": "minilm/config.json"}
FILES = {"gpt2.tiktoken": "bpe/gpt2.tiktoken", "spiece.model": "spm/botchan_en_unigram_1000.model",
         "ko_corpus.txt": "text/ko/constitution.txt"}
RUNNABLE = [path for path in pages() if any(block.runs for block in blocks(path))]


def _sets_the_environment(runnable: list[dict]) -> bool:
    """Whether a Python block of the page sets environment variables (which must come before TensorFlow's import)."""
    return any(block["language"] == "python" and "os.environ[" in block["code"] for block in runnable)


# `slow`: the pages train tiny models for a few CPU-minutes in all, and tests/conftest.py starts slow files first.
@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNABLE, ids=lambda path: path.name)
def test_page_code_blocks_run(page, tmp_path, assets):
    for name, member in FOLDERS.items():
        (tmp_path / name).symlink_to(Path(assets(member)).parent)
    for name, source in FILES.items():
        (tmp_path / name).symlink_to(assets(source))
    runnable = [dataclasses.asdict(block) for block in blocks(page) if block.runs]
    (tmp_path / ".blocks.json").write_text(json.dumps(runnable), encoding="utf-8")
    server = command_server.shared_server()
    env = {**command_server.checkout_environment(), **command_server.environment(server)}
    python = sys.executable if _sets_the_environment(runnable) else str(server / "python")
    result = subprocess.run([python, str(HERE / "run_page.py"), ".blocks.json"], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def test_every_skipped_block_gives_its_reason_and_runnable_blocks_say_their_language():
    for block in all_blocks():
        assert block.skip is None or block.skip.strip(), f"{block.page}:{block.line}"
        assert block.language, (f"{block.page}:{block.line}: a fenced block names its language "
                                "(text, yaml, python, bash)")
