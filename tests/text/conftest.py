"""Real corpora and reference tokenizers for the tokenizer tests."""

import base64

import pytest
from assets import wikipedia_text_lines
from text_cases import GPT2_PATTERN


@pytest.fixture(scope="session")
def wiki_lines(assets):
    return wikipedia_text_lines(assets("text/enwiki-sample.xml.bz2"), limit=40_000)


@pytest.fixture(scope="session")
def botchan_lines(assets):
    return [line for line in assets("text/botchan.txt").read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def korean_lines(assets):
    paths = [assets("text/ko/constitution.txt")] + sorted(assets("text/ko/kobill").glob("*.txt"))
    return [line for path in paths for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def tiktoken_gpt2(assets):
    import tiktoken

    ranks = {}
    for line in assets("bpe/gpt2.tiktoken").read_text().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding("gpt2-local", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256})


@pytest.fixture(scope="session")
def hf_minilm(assets):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(assets("minilm/tokenizer.json")))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    # tfbert never turns "[SEP]" typed in the text into the special id; compare with that setting.
    tokenizer.encode_special_tokens = True
    return tokenizer


@pytest.fixture(scope="session")
def wordpiece(assets):
    from tfbert.text import WordPieceTokenizer

    return WordPieceTokenizer(assets("minilm/vocab.txt"))


@pytest.fixture(scope="session")
def gpt2_bpe(assets):
    from tfbert.text import BytePairTokenizer

    return BytePairTokenizer.from_tiktoken(assets("bpe/gpt2.tiktoken"))
