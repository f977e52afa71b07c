"""XLM's pretraining data (`tfbert.families.xlm.data`): the `tlm:`/`mlm:`/`clm:` data and the objectives it trains."""

import pytest

from tfbert.config import load_config
from tfbert.families.xlm.data import multilingual_pipeline, parse_xlm_data
from tfbert.training.pretraining_inputs import ExampleSettings


def test_xlm_data_spec_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="tlm:SRC,TGT"):
        parse_xlm_data("en.txt")
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        parse_xlm_data(f"mlm:{tmp_path / 'missing.txt'}")


def test_xlm_objectives_follow_the_data_prefix(tmp_path):
    (tmp_path / "en.txt").write_text("a line\n")
    config = load_config("xlm_tiny")
    settings = ExampleSettings()
    assert multilingual_pipeline(config, None, f"clm:{tmp_path / 'en.txt'}", settings, "clm")[0] == ("clm",)
    with pytest.raises(ValueError, match="objectives tlm need data tlm:"):
        multilingual_pipeline(config, None, f"mlm:{tmp_path / 'en.txt'}", settings, "tlm")
