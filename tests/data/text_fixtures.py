"""Real-text helpers shared by the tests in tests/data.

Until `tfbert.text.WordPieceTokenizer` is available these tests tokenize with
TF-Text's `FastWordpieceTokenizer` directly, after the uncased-BERT
normalization (lowercase, NFD, drop accents).
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf
import tensorflow_text as tf_text


class UncasedWordPiece:
    """strings -> int32 ragged ids without special tokens, plus the ids tests need."""

    def __init__(self, vocab_file: str | Path):
        self.vocab = Path(vocab_file).read_text(encoding="utf-8").splitlines()
        self._tokenizer = tf_text.FastWordpieceTokenizer(
            vocab=self.vocab, suffix_indicator="##", unknown_token="[UNK]",
            no_pretokenization=False, support_detokenization=False,
        )
        index = {token: i for i, token in enumerate(self.vocab)}
        self.pad_id, self.unk_id = index["[PAD]"], index["[UNK]"]
        self.cls_id, self.sep_id, self.mask_id = index["[CLS]"], index["[SEP]"], index["[MASK]"]

    def vocabulary(self) -> list[str]:
        return list(self.vocab)

    def special_token_ids(self) -> list[int]:
        return [self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id]

    def __call__(self, strings: tf.Tensor) -> tf.RaggedTensor:
        text = tf_text.normalize_utf8(tf_text.case_fold_utf8(strings), "NFD")
        text = tf.strings.regex_replace(text, r"\p{Mn}", "")
        return tf.cast(self._tokenizer.tokenize(text), tf.int32)

    tokenize = __call__


def botchan_lines(path: str | Path) -> list[str]:
    """Botchan's non-empty lines (a sentence-ish each)."""
    return [line.strip() for line in Path(path).read_text(encoding="utf-8-sig").splitlines() if line.strip()]


def wikipedia_articles(path: str | Path) -> list[str]:
    """Plain-ish text of the articles in a MediaWiki XML dump (.bz2), markup stripped crudely."""
    import bz2
    import html
    import re

    xml = bz2.decompress(Path(path).read_bytes()).decode("utf-8")
    articles = []
    for body in re.findall(r"<text[^>]*>(.*?)</text>", xml, flags=re.S):
        text = html.unescape(body)
        text = re.sub(r"\{\{[^{}]*\}\}", " ", text)
        text = re.sub(r"\{\{[^{}]*\}\}", " ", text)
        text = re.sub(r"<ref[^>]*/>|<ref.*?</ref>|<[^>]+>", " ", text, flags=re.S)
        text = re.sub(r"\[\[(?:[^|\]]*\|)?([^\]]*)\]\]", r"\1", text)
        text = re.sub(r"\[https?://\S+ ?([^\]]*)\]", r"\1", text)
        text = re.sub(r"'{2,}|={2,}|^[*#:;|!{}].*$", " ", text, flags=re.M)
        paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
        article = "\n".join(p for p in paragraphs if len(p) > 40)
        if article:
            articles.append(article)
    return articles
