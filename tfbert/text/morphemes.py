"""Splitting training text into morphemes before a vocabulary is trained (`--pre-tokenize mecab`).

Only the vocabulary's training text is split: models still tokenize raw text in the graph, so
serving needs no morphological analyser (the vocabulary simply holds morpheme-like pieces).
Korean morphemes come from python-mecab-ko (the `mecab` extra), whose dictionary is bundled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

PRE_TOKENIZERS = ("mecab",)


def mecab_splitter() -> Callable[[str], str]:
    """A function from a line to its morphemes joined by spaces; ImportError naming the extra when
    python-mecab-ko is missing.

    Example:
        >>> mecab_splitter()("대한민국은 민주공화국이다.")
        '대한민국 은 민주 공화국 이 다 .'
    """
    try:
        from mecab import MeCab
    except ImportError:
        raise ImportError("--pre-tokenize mecab needs python-mecab-ko: pip install 'tfbert[mecab]'") from None
    tagger = MeCab()
    return lambda line: " ".join(tagger.morphs(line))


def pre_tokenize_lines(lines: Iterable[str], output: Path, split: Callable[[str], str]) -> Path:
    """Writes each line's split to `output`, one line each, streaming; returns `output`."""
    with output.open("w", encoding="utf-8") as file:
        for line in lines:
            file.write(split(line) + "\n")
    return output
