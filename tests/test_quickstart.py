"""`tfbert quickstart` end to end with a few steps: the printed report and the exported SavedModel."""

import json
import re

import pytest

from tfbert.cli import main
from tfbert.commands.quickstart import FILL_MASK_SENTENCES, WORK_MARKER

pytestmark = pytest.mark.end_to_end


def test_quickstart_runs_end_to_end_and_exports_fill_mask(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["quickstart", "--steps", "3"]) == 0
    out = capsys.readouterr().out

    for step in range(1, 6):
        assert f"[{step}/5]" in out
    assert "SentencePiece, 4,000 pieces" in out and "1,070 chapters" in out and "119 held out" in out
    assert "3 steps of 32 x 64 tokens" in out
    held_out = re.search(r"masked-LM accuracy (\d\.\d+), loss (\d+\.\d+) \(a uniform guess: 8\.29\); "
                         r"sentence-order accuracy (\d\.\d+)", out)
    assert held_out, out
    assert 0 <= float(held_out[1]) <= 1 and float(held_out[2]) > 0 and 0 <= float(held_out[3]) <= 1
    # Every sentence is shown with the mask token of the trained vocabulary, five guesses and the word of the text.
    for sentence, word in FILL_MASK_SENTENCES:
        assert sentence.format(mask="[MASK]") in out
    guesses = re.findall(r"^ +-> (?:\S+ \d\.\d\d, ){4}\S+ \d\.\d\d   \(the text: (\w+)\)$", out, flags=re.M)
    assert guesses == [word for _, word in FILL_MASK_SENTENCES], out
    assert "tfbert pretrain --config albert_tiny --tokenizer quickstart_run/vocab" in out

    version = tmp_path / "saved_models" / "quickstart" / "1"
    assert f"-> {version.relative_to(tmp_path)}" in out
    assert (version / "saved_model.pb").is_file() and (version / "variables" / "variables.index").is_file()
    metadata = json.loads((version / "assets.extra" / "tfbert_export.json").read_text())
    assert metadata["task"] == "fill_mask" and metadata["sequence_length"] == 64
    work = tmp_path / "quickstart_run"
    assert (work / WORK_MARKER).is_file() and (work / "vocab" / "spiece.model").is_file()
    assert (work / "pretrain" / "encoder" / "encoder.keras").is_file()


def test_quickstart_bad_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["quickstart", "--steps", "0"])
    assert "argument --steps: 0 is out of range; give 1 or more" in capsys.readouterr().err
    (tmp_path / "mine.txt").write_text("keep me")
    assert main(["quickstart", "--steps", "1", "--work-dir", str(tmp_path)]) == 2
    assert "(a folder that is not a tfbert quickstart run); nothing was changed: give another --work-dir, or add " \
           "--overwrite to replace it" in capsys.readouterr().err
    assert (tmp_path / "mine.txt").read_text() == "keep me"
    with pytest.raises(SystemExit):
        main(["quickstart", "--steps", "many"])
