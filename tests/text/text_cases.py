"""Hard strings and small helpers shared by the tokenizer tests."""

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

HARD_STRINGS = [
    b"",
    b" ",
    b"   \t\n  ",
    b"Hello, world!",
    "straße STRASSE Maß".encode(),
    "ﬁne ﬂow ½ x² Ⅷ ℌ".encode(),
    "中文字符测试abc 日本語のテキスト、カタカナ".encode(),
    "한국어 텍스트입니다.".encode(),
    "😀 emoji 👍🏽 test 🇺🇸 👨‍👩‍👧".encode(),
    "café naïve résumé Ångström İstanbul ΣΑΣ ὈΔΥΣΣΕΎΣ".encode(),
    b"a\x00b \x00 c\x00",
    b"tab\tnew\nline\rcr\x0bvt\x0cff\x1cfs\x7fdel",
    "\u200bzero\u200dwidth\ufeffbom\u00adsoft".encode(),
    "\u0301accent \u0085next\u00a0nbsp\u3000ideo\u2028ls".encode(),
    b"...!!!??? $100 @home #tag <b>&amp;</b> C++ e-mail",
    b"x" * 150,
    "ＦＵＬＬwidth ｶﾀｶﾅ".encode(),
    "\ue000private \U000f0000 \U0001F9FF".encode(),
    "Mixed: Привет мир, مرحبا بالعالم, שלום, नमस्ते, ภาษาไทย, Ελληνικά".encode(),
    b"invalid \xff\xfe bytes \xc3( and \xe2\x82 truncated \xf0\x9f\x98",
    b"lone continuation \x80\x81 end",
    b"surrogate \xed\xa0\x80 beyond \xf4\x90\x80\x80 overlong \xc0\xaf five \xf8\x88\x80\x80\x80",
    "it's we'll they've I'm you'd 's 'S  's".encode(),
    b"  leading and trailing spaces   ",
    b"multiple   spaces\n\n\nand\r\n\r\nnewlines \n x",
    b"1234567890 3.14159 1,000,000",
    ("\U00020000 \u3400 \uf900 \u2f00 " + "ü" * 60 + " " + "한" * 40).encode(),
]


def batched(items, size):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def as_text(data: bytes) -> str:
    """What the reference libraries see for possibly invalid UTF-8 bytes."""
    return data.decode("utf-8", errors="replace")


def as_ranges(code_points):
    """Sorted code points as (first, last) ranges of consecutive ones, the form of tfbert's generated tables."""
    ranges = []
    for c in code_points:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return tuple(ranges)
