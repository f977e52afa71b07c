"""The character classes WordPiece normalizes and splits with are those of Hugging Face `tokenizers`.

`tfbert/text/_bert_character_classes.py` is generated data: these tests rebuild each table from
`tokenizers` itself, code point by code point (a few seconds), and check it equals the stored one.
"""

import pytest
from text_cases import as_ranges

from tfbert.text import _bert_character_classes as tables

CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def dropped_code_points():
    """What BertNormalizer's text cleaning removes (controls, format and private-use characters, U+FFFD)."""
    from tokenizers import normalizers

    cleaner = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    return [c for c in CODE_POINTS if cleaner.normalize_str(chr(c)) == ""]


def combining_mark_code_points():
    """What BertNormalizer's accent stripping removes after NFD (nonspacing marks; the StripAccents
    normalizer removes every mark, BertNormalizer only these)."""
    from tokenizers import normalizers

    stripper = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    return [c for c in CODE_POINTS if stripper.normalize_str(chr(c)) == ""]


def punctuation_code_points():
    """What BertPreTokenizer splits off as a word of its own, read from one string `a<c>a<c>...a`."""
    from tokenizers import pre_tokenizers

    text = "".join("a" + chr(c) for c in CODE_POINTS) + "a"
    pieces = pre_tokenizers.BertPreTokenizer().pre_tokenize_str(text)
    alone = {start for piece, (start, end) in pieces if end - start == 1 and piece != "a"}
    return [c for i, c in enumerate(CODE_POINTS) if 2 * i + 1 in alone]


@pytest.mark.parametrize("table, rebuild", [
    ("DROPPED", dropped_code_points),
    ("COMBINING_MARKS", combining_mark_code_points),
    ("PUNCTUATION", punctuation_code_points),
])
def test_table_equals_what_huggingface_tokenizers_does(table, rebuild):
    assert as_ranges(rebuild()) == getattr(tables, table)


def test_tables_differ_from_the_unicode_database_where_tokenizers_is_older():
    import unicodedata

    punctuation = {c for first, last in tables.PUNCTUATION for c in range(first, last + 1)}
    assert 0x11660 not in punctuation and unicodedata.category(chr(0x11660)) == "Po"
    assert ord("!") in punctuation and ord("、") in punctuation
