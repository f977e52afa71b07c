"""Real-text helpers shared by the tests in tests/data.

Until `tfbert.text.WordPieceTokenizer` is available these tests tokenize with
TF-Text's `FastWordpieceTokenizer` directly, after the uncased-BERT
normalization (lowercase, NFD, drop accents).
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf
import tensorflow_text as tf_text

from benchmarks.lab.assets import botchan_lines, wikipedia_articles  # noqa: F401  (the tests import them from here)


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
