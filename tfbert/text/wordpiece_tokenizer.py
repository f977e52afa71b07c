"""BERT WordPiece tokenization in TensorFlow ops, id-exact with Hugging Face `tokenizers`.

TF-Text's normalizers (`FastBertNormalizer`, `BertTokenizer`) case-fold with NFKC, which turns
`ß` into `ss` and `ﬁ` into `fi`; BERT's reference lowercases without compatibility folding. So the
exact general path spells the normalization out as BERT defines it and uses only the subword step
of TF-Text (`FastWordpieceTokenizer`). Strings free of the characters where the two disagree
(`_wordpiece_unsafe_chars`, nearly all real text) take TF-Text's fast end-to-end path instead:
`FastBertNormalizer` + `FastWordpieceTokenizer` with its own split, several times faster.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Mapping, Sequence

import tensorflow as tf
import tensorflow_text as tf_text

from tfbert.artifacts.layout import TOKENIZER_CONFIG_FILE as CONFIG_FILE
from tfbert.text._aligned_normalization import character_ends, input_span, normalize_with_alignment
from tfbert.text._bert_character_classes import COMBINING_MARKS, DROPPED, PUNCTUATION
from tfbert.text._files import PathLike, read_lines
from tfbert.text._wordpiece_unsafe_chars import (
    EXPANDING_WHEN_LOWERCASING,
    MOST_CHARACTERS_FROM_ONE,
    UNSAFE_WHEN_CASED,
    UNSAFE_WHEN_LOWERCASING,
)
from tfbert.text.base import Tokenizer, as_utf8, roles_in_config

VOCAB_FILE = "vocab.txt"
MAX_CHARS_PER_WORD = 100


def _character_class(ranges) -> str:
    return "".join(f"\\x{{{first:X}}}" if first == last else f"\\x{{{first:X}}}-\\x{{{last:X}}}" for first, last in ranges)


# BERT's basic tokenizer: CJK ideographs are words of their own.
_CJK = (
    r"\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2B73F}"
    r"\x{2B740}-\x{2B81F}\x{2B920}-\x{2CEAF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}"
)
# Whitespace that survives BERT's text cleaning (the other White_Space characters are controls and are dropped).
_WHITESPACE = r"\t\n\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}"
# Punctuation, control and combining-mark classes come from generated tables of what Hugging Face
# `tokenizers` does (see `_bert_character_classes`), not from RE2's newer `\p{P}`, `\p{Cf}`, `\p{Mn}`.
# BERT counts all ASCII punctuation (`$+<=>^|~` and the backquote) as punctuation.
_WORD_ON_ITS_OWN = f"[{_character_class(PUNCTUATION)}{_CJK}]"
_WORD_BOUNDARY = f"[{_WHITESPACE}]|{_WORD_ON_ITS_OWN}"
# BERT's clean_text drops NUL, U+FFFD and the control (but tab and line ends are whitespace), format and
# private-use characters.
_DROPPED = f"[{_character_class(DROPPED)}]"
_COMBINING_MARK = f"[{_character_class(COMBINING_MARKS)}]"
# A string takes TF-Text's fast path when it has none of the characters where the fast path is not
# BERT's and no word that could pass either length limit: BERT's 100 characters after normalization,
# the fast path's 400 bytes (`_LONG_WORD`).
MAX_BYTES_PER_CHAR = 4


def resolve_keep_hangul(tokens: Sequence[str], lowercase: bool, keep_hangul: bool | None) -> bool:
    """Whether lowercasing keeps Hangul syllables. None (auto): yes, unless the vocabulary holds
    conjoining jamo, the sign it was trained on NFD text as BERT's uncased vocabularies were (Hugging
    Face's uncased normalizer decomposes Hangul). False with lowercasing and a vocabulary without jamo
    warns, naming the fix."""
    first, last = _CONJOINING_JAMO
    syllable_vocabulary = not any(first <= ord(char) <= last for token in tokens for char in token)
    if keep_hangul is None:
        return syllable_vocabulary
    if lowercase and not keep_hangul and syllable_vocabulary:
        warnings.warn(
            "WordPieceTokenizer: lowercase with keep_hangul=False strips accents after NFD, which breaks every "
            "Hangul syllable into jamo; pass keep_hangul=True (\"keep_hangul\": true in tokenizer_config.json) "
            "to keep the syllables", stacklevel=3)
    return keep_hangul



def _long_word_pattern() -> str:
    """Strings with a word that could pass 100 characters after normalization (or 400 bytes).

    Every code point normalizes to at most one character except the expanding ones (at most 3), so a word
    of at most 100 characters without them, or at most 33 with them, stays within both limits (4 bytes per
    character at most). Words are counted as runs between ASCII whitespace and punctuation, which hold
    BERT's words, so the test is conservative. A string is long when it has a run over 100 characters, or
    an expanding character and a run over 33: the run lies after or before that character (`E.*R{34}`,
    `R{34}.*E`), or holds it with at least 17 run characters on one side (`R{17}E`, `ER{17}`; so runs of 18
    or more with an expanding character count as long too). Written so that RE2's DFA stays small (a few
    counters): one pass, as fast as a plain run-length check.
    """
    run = r"[^\t\n\r !-/:-@\[-`{-~]"
    expanding = f"[{_character_class(EXPANDING_WHEN_LOWERCASING)}]"
    longest = MAX_CHARS_PER_WORD // MOST_CHARACTERS_FROM_ONE + 1
    either_side = (longest + 1) // 2
    alternatives = [f"{run}{{{MAX_CHARS_PER_WORD + 1}}}", f"{expanding}.*{run}{{{longest}}}", f"{run}{{{longest}}}.*{expanding}",
                    f"{run}{{{either_side}}}{expanding}", f"{expanding}{run}{{{either_side}}}"]
    return f"(?s).*(?:{'|'.join(alternatives)}).*"


_LONG_WORD = _long_word_pattern()

# NFD splits each Hangul syllable into conjoining jamo (letters, not accents, so stripping keeps them).
_HANGUL_SYLLABLES = (0xAC00, 0xD7A3)
_CONJOINING_JAMO = (0x1100, 0x11FF)
_HAS_CONJOINING_JAMO = r"(?s).*[\x{1100}-\x{11FF}].*"

DEFAULT_SPECIAL_TOKENS = {"cls": "[CLS]", "sep": "[SEP]", "pad": "[PAD]", "mask": "[MASK]", "unk": "[UNK]"}


def bert_normalize(text: tf.Tensor, lowercase: bool, keep_hangul: bool = False) -> tf.Tensor:
    """BERT's normalization of strings or words: drop controls, and when lowercasing strip accents
    (NFD, drop Mn) and lowercase character by character. `keep_hangul` composes the Hangul syllables
    NFD split into jamo again (NFC, on strings holding conjoining jamo only)."""
    words = tf.strings.regex_replace(text, _DROPPED, "")
    if lowercase:
        words = tf_text.normalize_utf8(words, "NFD")
        words = tf.strings.regex_replace(words, _COMBINING_MARK, "")
        if keep_hangul:
            jamo = tf.strings.regex_full_match(words, _HAS_CONJOINING_JAMO)
            words = tf.where(jamo, tf_text.normalize_utf8(words, "NFC"), words)
        # BERT lowercases character by character: a final capital sigma becomes σ, not ς.
        words = tf.strings.regex_replace(words, "Σ", "σ")
        words = tf.strings.lower(words, encoding="utf-8")
    return words


def split_words_with_offsets(strings: tf.Tensor, lowercase: bool, keep_hangul: bool = False):
    """BERT's basic tokenizer on valid UTF-8 strings [batch]: normalize, then split, as BERT does.

    Returns (normalized words, their start and end byte offsets in the normalized strings, and the
    `AlignedText` that maps those offsets back into the input), the first three RaggedTensors
    [batch, words].
    """
    aligned = normalize_with_alignment(strings, lambda text: bert_normalize(text, lowercase, keep_hangul))
    words, starts, ends = tf_text.regex_split_with_offsets(aligned.normalized, _WORD_BOUNDARY, _WORD_ON_ITS_OWN)
    return words, starts, ends, aligned


class WordPieceTokenizer(Tokenizer):
    """BERT / ELECTRA / SpanBERT WordPiece tokenizer made of TF ops.

    Gives the ids of Hugging Face `tokenizers` with BertNormalizer(clean_text, handle_chinese_chars,
    strip_accents=lowercase, lowercase) + BertPreTokenizer + WordPiece(max 100 chars per word).
    Special-token strings in the input (`"[SEP]"`) are tokenized as text, never as special ids.
    Lowercasing keeps Hangul syllables whole (`keep_hangul`, see `resolve_keep_hangul`) unless the
    vocabulary was trained on decomposed Hangul.

    Example:
        >>> tokenizer = WordPieceTokenizer("vocab.txt")
        >>> tokenizer.tokenize(["Hello, world!"])
        <tf.RaggedTensor [[7592, 1010, 2088, 999]]>
        >>> tokenizer.detokenize([[7592, 1010, 2088, 999]])
        <tf.Tensor: ... numpy=array([b'hello , world !'], dtype=object)>
    """

    def __init__(
        self,
        vocab_file: PathLike | Sequence[str],
        lowercase: bool = True,
        special_tokens: Mapping[str, str | None] | None = None,
        name: str | None = None,
        keep_hangul: bool | None = None,
    ):
        if isinstance(vocab_file, (list, tuple)):
            tokens, source = list(vocab_file), "WordPiece vocabulary list"
            if not tokens:
                raise ValueError(f"{source} is empty")
        else:
            tokens, source = read_lines(vocab_file, "WordPiece vocabulary"), f"WordPiece vocabulary file {vocab_file}"
        duplicates = len(tokens) - len(set(tokens))
        if duplicates:
            raise ValueError(f"{source} has {duplicates} duplicate tokens")
        specials = dict(DEFAULT_SPECIAL_TOKENS, **(special_tokens or {}))
        if specials.get("unk") not in tokens:
            raise ValueError(f"{source} lacks the unknown token {specials.get('unk')!r}")
        super().__init__(tokens, specials, name=name)
        self.lowercase = lowercase
        self.keep_hangul = resolve_keep_hangul(tokens, lowercase, keep_hangul)
        unknown = specials["unk"]
        self._words_to_pieces = tf_text.FastWordpieceTokenizer(
            vocab=tokens,
            token_out_type=tf.int32,
            unknown_token=unknown,
            no_pretokenization=True,
            max_bytes_per_word=MAX_BYTES_PER_CHAR * MAX_CHARS_PER_WORD,
        )
        unsafe_ranges = list(UNSAFE_WHEN_LOWERCASING if lowercase else UNSAFE_WHEN_CASED)
        if lowercase and self.keep_hangul:  # TF-Text's fast normalizer decomposes Hangul
            unsafe_ranges += [_HANGUL_SYLLABLES, _CONJOINING_JAMO]
        unsafe = _character_class(unsafe_ranges)
        self._fast_path_text = f"[^{unsafe}]*"
        self._fast_normalizer = tf_text.FastBertNormalizer(lower_case_nfd_strip_accents=lowercase)
        self._fast_tokenizer = tf_text.FastWordpieceTokenizer(
            vocab=tokens,
            token_out_type=tf.int32,
            unknown_token=unknown,
            no_pretokenization=False,
            max_bytes_per_word=MAX_BYTES_PER_CHAR * MAX_CHARS_PER_WORD,
        )

    def _word_pieces(self, words: tf.RaggedTensor, with_offsets: bool):
        """WordPiece on normalized words; words over 100 characters become [UNK] as in BERT."""
        too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > MAX_CHARS_PER_WORD
        words = tf.where(too_long, self._special_tokens["unk"], words.flat_values)
        if with_offsets:
            return self._words_to_pieces.tokenize_with_offsets(words)
        return self._words_to_pieces.tokenize(words)

    def _general(self, strings: tf.Tensor, with_offsets: bool):
        strings = as_utf8(strings)
        if not with_offsets:
            # Without offsets, normalize whole strings and split afterwards: BERT's own order, fewer op calls.
            normalized = bert_normalize(strings, self.lowercase, self.keep_hangul)
            words = tf_text.regex_split(normalized, _WORD_BOUNDARY, _WORD_ON_ITS_OWN)
            return (words.with_flat_values(self._word_pieces(words, False)).merge_dims(1, 2),)
        words, word_starts, word_ends, aligned = split_words_with_offsets(strings, self.lowercase, self.keep_hangul)
        pieces, piece_starts, piece_ends = self._word_pieces(words, True)
        word_of_piece = pieces.value_rowids()
        # A word over the length limit is one [UNK] over the whole word (its offsets are those of "[UNK]").
        too_long = tf.gather(tf.strings.length(words.flat_values, unit="UTF8_CHAR") > MAX_CHARS_PER_WORD, word_of_piece)
        word_start = tf.gather(word_starts.flat_values, word_of_piece)
        starts = word_start + tf.where(too_long, tf.zeros_like(piece_starts.flat_values), piece_starts.flat_values)
        ends = tf.where(too_long, tf.gather(word_ends.flat_values, word_of_piece), word_start + piece_ends.flat_values)
        input_starts, input_ends = input_span(aligned, tf.gather(words.value_rowids(), word_of_piece), starts, ends)
        return tuple(words.with_flat_values(pieces.with_flat_values(part)).merge_dims(1, 2)
                     for part in (pieces.flat_values, input_starts, input_ends))

    def _fast(self, strings: tf.Tensor, with_offsets: bool):
        if with_offsets:
            normalized, offsets = self._fast_normalizer.normalize_with_offsets(strings)
            ids, starts, ends = self._fast_tokenizer.tokenize_with_offsets(normalized)
            # The normalizer's offsets map each byte of its output back into the input. A token ends where the
            # input character of its last byte ends (Hugging Face's offsets), before any marks stripped after it.
            rows = ids.value_rowids()
            row_splits = tf.gather(offsets.row_splits, rows)
            start_values = tf.gather(offsets.flat_values, starts.flat_values + row_splits)
            last_byte = tf.gather(offsets.flat_values, ends.flat_values - 1 + row_splits)
            end_values = character_ends(strings, rows, last_byte)
            return ids, starts.with_flat_values(start_values), ends.with_flat_values(end_values)
        return (self._fast_tokenizer.tokenize(self._fast_normalizer.normalize(strings)),)

    def _tokenize_batch(self, strings: tf.Tensor, with_offsets: bool):
        fast = tf.strings.regex_full_match(strings, self._fast_path_text) & ~tf.strings.regex_full_match(strings, _LONG_WORD)

        def mixed():
            fast_rows = tf.where(fast)[:, 0]
            other_rows = tf.where(~fast)[:, 0]
            fast_results = self._fast(tf.gather(strings, fast_rows), with_offsets)
            general_results = self._general(tf.gather(strings, other_rows), with_offsets)
            order = tf.math.invert_permutation(tf.concat([fast_rows, other_rows], 0))
            return tuple(tf.gather(tf.concat([a, b], 0), order) for a, b in zip(fast_results, general_results))

        return tf.cond(tf.reduce_all(fast), lambda: self._fast(strings, with_offsets), mixed)

    def _tokenize(self, strings, with_offsets: bool):
        strings = tf.convert_to_tensor(strings, tf.string)
        if strings.shape.rank == 0:
            return tuple(part[0] for part in self._tokenize_batch(strings[None], with_offsets))
        return self._in_shards(f"batch/{with_offsets}", lambda rows: self._tokenize_batch(rows, with_offsets), strings)

    def tokenize(self, strings) -> tf.RaggedTensor:
        """Ids without special tokens: a RaggedTensor [batch, tokens] of int32 (1-D for a scalar input)."""
        return self._tokenize(strings, with_offsets=False)[0]

    def tokenize_with_offsets(self, strings):
        """(ids, starts, ends): start/end byte offsets (int64) of each token in the input string."""
        return self._tokenize(strings, with_offsets=True)

    def detokenize(self, ids) -> tf.Tensor:
        """Joins tokens with spaces and glues `##` continuations back on, as BERT's decoder does."""
        if not isinstance(ids, tf.RaggedTensor):
            ids = tf.convert_to_tensor(ids)
            if ids.shape.rank == 1:
                return self.detokenize(ids[None])[0]
            ids = tf.RaggedTensor.from_tensor(ids)
        tokens = self.id_to_token(ids)
        text = tf.strings.reduce_join(tokens, axis=-1, separator=" ")
        return tf.strings.regex_replace(text, " ##", "")

    def save_assets(self, directory: PathLike) -> None:
        """Writes vocab.txt and tokenizer_config.json, which `WordPieceTokenizer.from_directory` reads."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / VOCAB_FILE).write_text("".join(token + "\n" for token in self._tokens), encoding="utf-8")
        config = {"class": "WordPieceTokenizer", "lowercase": self.lowercase, "keep_hangul": self.keep_hangul,
                  "special_tokens": self.special_tokens}
        (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")

    @classmethod
    def from_directory(cls, directory: PathLike) -> "WordPieceTokenizer":
        """Loads what `save_assets` wrote (a bare vocab.txt folder works too, lowercasing)."""
        directory = Path(directory)
        config_path = directory / CONFIG_FILE
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
        return cls(directory / VOCAB_FILE, lowercase=config.get("lowercase", True), special_tokens=roles_in_config(config),
                   keep_hangul=config.get("keep_hangul"))
