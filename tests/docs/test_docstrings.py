"""Every `>>>` example in tfbert's docstrings runs and prints what it shows, module by module.

Each module's examples run in a temporary working folder that holds the real test assets under the names the
examples use (`EXAMPLE_FILES`: `vocab.txt`, a SentencePiece model, GPT-2's BPE, the `all-MiniLM-L6-v2/` folder), linked from
the asset cache. Examples that need what a test machine lacks (a server, a checkpoint folder, the network, minutes
of training) carry `# doctest: +SKIP`; everything else runs here.
"""

import doctest
import importlib
from pathlib import Path

import pytest
from assets import asset

PACKAGE = Path(__file__).resolve().parents[2] / "tfbert"
# tests/test_public_api.py runs these two with the public API's other checks.
ELSEWHERE = {"tfbert", "tfbert.architectures.registry"}
# Names the examples use -> test assets (tests/assets.py), linked into each module's working folder.
EXAMPLE_FILES = {
    "vocab.txt": "minilm/vocab.txt",   # BERT's uncased WordPiece vocabulary
    "botchan_en_unigram_1000.model": "spm/botchan_en_unigram_1000.model",
    "all-MiniLM-L6-v2": "minilm",      # a Hugging Face folder: config.json, model.safetensors, tokenizer files
    "gpt2.tiktoken": "bpe/gpt2.tiktoken",
}


def module_names() -> list[str]:
    """Every module of the package that holds a `>>>` line, found without importing anything."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return [name for name in names if name not in ELSEWHERE]


@pytest.mark.parametrize("name", module_names())
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    for file_name, source in EXAMPLE_FILES.items():
        (tmp_path / file_name).symlink_to(asset(source))
    monkeypatch.chdir(tmp_path)  # examples that write files (tfbert.corpus's split) write them here
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=report.append)
    assert not runner.failures, "".join(report)
