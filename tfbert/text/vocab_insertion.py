"""Adding whole words to a trained tokenizer with every existing id unchanged ("insert_vocab").

Each word is added in the spelling a word after a space has in the tokenizer's scheme, so that it
comes out as one piece wherever it stands as a word of its own:

- WordPiece: the word, normalized as the tokenizer normalizes text (lower-cased when uncased),
  appended to the vocabulary; WordPiece's longest match takes it whole.
- SentencePiece (unigram and BPE): `▁word` appended to the model as a USER_DEFINED piece through
  sentencepiece's own protobuf module; sentencepiece and TF-Text's op both keep such pieces whole.
  A character of the words that is no piece yet is appended first, as a piece of its own: text
  holding it elsewhere then gets that piece instead of the unknown one, and tfbert's exact unigram
  segmentation, which needs every character of a piece to be a piece, stays available.
- Byte-level BPE: `Ġword` built by merges appended after the existing ones (so no existing merge
  changes rank): the word's current pieces are joined left to right, and each join is a new token
  (a word that split into k pieces adds up to k - 1 tokens, the last being the word).

`insert_words` reports the words already present (not added again) and the words the new
tokenizer still does not give as one piece (WordPiece splits at punctuation, byte-level BPE
between letters and digits).
"""

from __future__ import annotations

import dataclasses
import unicodedata
from typing import Sequence

import tensorflow as tf
from sentencepiece import sentencepiece_model_pb2 as model_pb2

from tfbert.text import byte_pair_tokenizer, wordpiece_tokenizer
from tfbert.text.base import Tokenizer
from tfbert.text.byte_pair_tokenizer import BytePairTokenizer
from tfbert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from tfbert.text.wordpiece_tokenizer import WordPieceTokenizer

SENTENCEPIECE_SPACE = "\u2581"


@dataclasses.dataclass
class Insertion:
    """What `insert_words` did: the new tokenizer, the tokens appended (in id order), the words that
    were single tokens already, and the words the new tokenizer still splits."""

    tokenizer: Tokenizer
    added: list[str]
    existing: list[str]
    split: list[str]


def read_words(lines: Sequence[str], source: str) -> list[str]:
    """Distinct words of a tokens file, one a line (blank lines skipped); a line with a space inside
    is a ValueError naming it."""
    words = []
    for number, line in enumerate(lines, 1):
        word = line.strip()
        if any(char.isspace() for char in word):
            raise ValueError(f"{source}: line {number} {word!r} holds a space; give one word a line")
        if word:
            words.append(word)
    if not words:
        raise ValueError(f"{source} has no words; give one word a line")
    return list(dict.fromkeys(words))


def insert_words(tokenizer: Tokenizer, words: Sequence[str]) -> Insertion:
    """Appends `words` to a copy of `tokenizer` (WordPiece, SentencePiece or byte-level BPE).

    Example:
        >>> from tfbert.text import load_tokenizer
        >>> insertion = insert_words(load_tokenizer("vocab/"), ["코로나19", "mRNA"])
        >>> len(insertion.added), insertion.tokenizer.vocabulary_size()   # one of the two words is new
        (1, 30523)
        >>> insertion.tokenizer.save_assets("vocab_domain/")
    """
    inserters = {WordPieceTokenizer: _insert_wordpiece, SentencePieceTokenizer: _insert_sentencepiece,
                 BytePairTokenizer: _insert_byte_pairs}
    inserter = next((function for kind, function in inserters.items() if isinstance(tokenizer, kind)), None)
    if inserter is None:
        raise ValueError(f"insert_words supports WordPiece, SentencePiece and byte-level BPE, not {type(tokenizer).__name__}")
    words = list(dict.fromkeys(words))
    new_tokenizer, added, existing = inserter(tokenizer, words)
    pieces = new_tokenizer.tokenize(tf.constant([" " + word for word in words])).row_lengths().numpy()
    split = [word for word, count in zip(words, pieces) if count != 1]
    return Insertion(new_tokenizer, added, existing, split)


def _insert_wordpiece(tokenizer: WordPieceTokenizer, words: Sequence[str]):
    normalized = wordpiece_tokenizer.bert_normalize(tf.constant(list(words)), tokenizer.lowercase, tokenizer.keep_hangul)
    spellings = [word.decode("utf-8") for word in normalized.numpy()]
    vocabulary = tokenizer.vocabulary()
    present = set(vocabulary)
    existing = [word for word, spelling in zip(words, spellings) if spelling in present]
    added = [spelling for spelling in dict.fromkeys(spellings) if spelling and spelling not in present]
    new_tokenizer = WordPieceTokenizer(vocabulary + added, lowercase=tokenizer.lowercase,
                                       special_tokens=tokenizer.special_tokens, keep_hangul=tokenizer.keep_hangul)
    return new_tokenizer, added, existing


def _sentencepiece_spelling(tokenizer: SentencePieceTokenizer, word: str) -> str:
    """`▁word` as the tokenizer's normalization leaves the word: NFKC (or, stripping accents, NFKD
    without Mn), lower-cased when the tokenizer lower-cases."""
    if tokenizer.strip_accents:
        word = "".join(char for char in unicodedata.normalize("NFKD", word) if unicodedata.category(char) != "Mn")
    else:
        word = unicodedata.normalize("NFKC", word)
    return SENTENCEPIECE_SPACE + (word.lower() if tokenizer.lowercase else word)


def _insert_sentencepiece(tokenizer: SentencePieceTokenizer, words: Sequence[str]):
    model = model_pb2.ModelProto()
    model.ParseFromString(tokenizer.model_proto())
    present = {piece.piece for piece in model.pieces}
    spellings = [_sentencepiece_spelling(tokenizer, word) for word in words]
    existing = [word for word, spelling in zip(words, spellings) if spelling in present]
    added = [spelling for spelling in dict.fromkeys(spellings) if spelling not in present]
    characters = [char for char in dict.fromkeys("".join(added)) if char not in present]
    added = characters + added
    for spelling in added:
        piece = model.pieces.add()
        piece.piece = spelling
        piece.score = 0.0
        piece.type = model_pb2.ModelProto.SentencePiece.USER_DEFINED
    new_tokenizer = SentencePieceTokenizer(model.SerializeToString(), lowercase=tokenizer.lowercase,
                                           special_tokens=tokenizer.special_tokens, exact=tokenizer.exact,
                                           strip_accents=tokenizer.strip_accents)
    return new_tokenizer, added, existing


def _byte_pair_split(raw: bytes, ranks: dict[tuple[bytes, bytes], int]) -> list[bytes]:
    """BPE on one piece's bytes: merge the lowest-ranked adjacent pair until none applies (the in-graph
    tokenizer's rounds give the same result)."""
    parts = [raw[i : i + 1] for i in range(len(raw))]
    while len(parts) > 1:
        pairs = [(ranks.get((left, right), len(ranks)), at) for at, (left, right) in enumerate(zip(parts, parts[1:]))]
        rank, at = min(pairs)
        if rank == len(ranks):
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return parts


def _insert_byte_pairs(tokenizer: BytePairTokenizer, words: Sequence[str]):
    alphabet = byte_pair_tokenizer.byte_alphabet()
    spell = lambda raw: "".join(alphabet[byte] for byte in raw)  # noqa: E731
    to_bytes = {char: byte for byte, char in alphabet.items()}
    merges = tokenizer.merges()
    ranks = {tuple(bytes(to_bytes[c] for c in part) for part in line.split(" ")): rank for rank, line in enumerate(merges)}
    vocabulary = {token: index for index, token in enumerate(tokenizer.vocabulary())}
    # Only a word GPT-2's split keeps in one piece can become one token (not "covid19": letters, digits).
    whole = byte_pair_tokenizer.split_pieces(tf.constant([" " + word for word in words])).row_lengths().numpy() == 1
    existing, added = [], []
    for word in [word for word, one_piece in zip(words, whole) if one_piece]:
        raw = (" " + word).encode("utf-8")
        if spell(raw) in vocabulary:
            existing.append(word)
            continue
        parts = _byte_pair_split(raw, ranks)
        joined = parts[0]
        for part in parts[1:]:
            if (joined, part) in ranks:  # an earlier merge outranks it here; the word is reported as split
                break
            ranks[(joined, part)] = len(ranks)
            merges.append(f"{spell(joined)} {spell(part)}")
            joined += part
            if spell(joined) not in vocabulary:
                vocabulary[spell(joined)] = len(vocabulary)
                added.append(spell(joined))
    new_tokenizer = BytePairTokenizer(vocabulary, merges, special_tokens=tokenizer.special_tokens)
    return new_tokenizer, added, existing
