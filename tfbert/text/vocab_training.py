"""Training vocabularies from a corpus, written as files the tfbert tokenizers load.

A corpus is a text file path, a list of paths, or a `tf.data.Dataset` of string scalars or
batches; it is read as a stream of lines (batches of 1024), never loaded whole.

- `train_wordpiece`: counts BERT words (this package's exact normalization and split) and runs
  TF-Text's WordPiece learner (`wordpiece_tokenizer_learner_lib.learn`).
- `train_sentencepiece`: `sentencepiece.SentencePieceTrainer` fed from a sentence iterator.
- `train_byte_bpe`: a small byte-level BPE trainer written here, since neither TF-Text nor
  sentencepiece trains GPT-2-style byte-level BPE (and Hugging Face `tokenizers` is not a
  dependency): pieces come from `BytePairTokenizer`'s in-graph GPT-2 split, then the most
  frequent adjacent pair is merged repeatedly, with incremental pair counts.
- `add_tokens`: appends tokens to a WordPiece or byte-level BPE vocabulary, keeping old ids
  (`tfbert.text.vocab_insertion.insert_words` adds words so that text produces them, SentencePiece too).
"""

from __future__ import annotations

import collections
import io
import json
import os
import re
from pathlib import Path
from typing import Iterable, Iterator, Sequence, Union

import sentencepiece
import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib

from tfbert.text import byte_pair_tokenizer, sentencepiece_tokenizer, wordpiece_tokenizer
from tfbert.text._files import PathLike, existing_file, read_json, read_lines
from tfbert.text.base import Tokenizer, as_utf8
from tfbert.text.byte_pair_tokenizer import BytePairTokenizer
from tfbert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from tfbert.text.wordpiece_tokenizer import WordPieceTokenizer

Corpus = Union[PathLike, Sequence[PathLike], tf.data.Dataset]

BERT_RESERVED_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
ALBERT_CONTROL_TOKENS = ("[CLS]", "[SEP]", "[MASK]")
ROBERTA_LEADING_TOKENS = ("<s>", "<pad>", "</s>", "<unk>")
ROBERTA_TRAILING_TOKENS = ("<mask>",)
_BATCH = 1024
_WORDPIECE_SLACK = 1.05


def _line_batches(corpus: Corpus) -> tf.data.Dataset:
    """The corpus as a dataset of 1-D string batches of non-empty lines."""
    if isinstance(corpus, tf.data.Dataset):
        dataset = corpus.unbatch() if corpus.element_spec.shape.rank == 1 else corpus
    else:
        paths = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
        files = [str(existing_file(path, "corpus")) for path in paths]
        dataset = tf.data.TextLineDataset(files)
    return dataset.filter(lambda line: tf.strings.length(tf.strings.strip(line)) > 0).batch(_BATCH)


def corpus_lines(corpus: Corpus) -> Iterator[str]:
    """The corpus's non-empty lines as Python strings (invalid UTF-8 replaced)."""
    for batch in _line_batches(corpus):
        for line in as_utf8(batch).numpy():
            yield line.decode("utf-8")


def _write_lines(path: Path, lines: Iterable[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _wordpiece_at(words: list[tuple[str, int]], threshold: int, params) -> list[str]:
    return wordpiece_tokenizer_learner_lib.learn_with_thresh(words, threshold, params)


def learn_exact_wordpiece(
    counts: collections.Counter[str], vocab_size: int, reserved_tokens: Sequence[str], min_count: int = 2
) -> list[str]:
    """A WordPiece vocabulary of exactly `vocab_size` tokens, or ValueError saying why not.

    TF-Text's `learn` binary-searches a count threshold and returns whatever size the last threshold
    gave (4,211 tokens for 4,000 asked). This searches the highest threshold whose vocabulary has at
    least `vocab_size` tokens, then keeps the reserved tokens, every character and `##` character
    (so every word still tokenizes) and the most frequent of the other pieces, in the learner's order.
    """
    params = wordpiece_tokenizer_learner_lib.Params(
        upper_thresh=None, lower_thresh=min_count, num_iterations=4, max_input_tokens=int(5e6),
        max_token_length=wordpiece_tokenizer.MAX_CHARS_PER_WORD, max_unique_chars=1000, vocab_size=vocab_size,
        slack_ratio=0.0, include_joiner_token=True, joiner="##", reserved_tokens=list(reserved_tokens))
    all_counts = wordpiece_tokenizer_learner_lib.get_input_words(counts.items(), params.reserved_tokens, params.max_token_length)
    allowed = wordpiece_tokenizer_learner_lib.get_allowed_chars(all_counts, params.max_unique_chars)
    words = wordpiece_tokenizer_learner_lib.filter_input_words(all_counts, allowed, params.max_input_tokens)
    if not words:
        raise ValueError("the corpus has no words to learn a WordPiece vocabulary from")
    low, high = min_count, max(count for _, count in words)
    largest = _wordpiece_at(words, low, params)
    if len(largest) < vocab_size:
        raise ValueError(f"vocab size {vocab_size}: this corpus gives at most {len(largest):,} WordPiece tokens "
                         f"(pieces seen at least {min_count} times); give a size up to {len(largest):,} or more text")
    best = largest
    while low < high:  # the vocabulary shrinks as the threshold grows
        middle = (low + high + 1) // 2
        vocabulary = _wordpiece_at(words, middle, params)
        if len(vocabulary) >= vocab_size:
            low, best = middle, vocabulary
            if len(vocabulary) <= vocab_size * _WORDPIECE_SLACK:
                break
        else:
            high = middle - 1
    characters = {token.removeprefix("##") for token in best if len(token.removeprefix("##")) == 1}
    required = set(reserved_tokens) | characters | {"##" + character for character in characters}
    if len(required & set(best)) > vocab_size:
        raise ValueError(f"vocab size {vocab_size} is smaller than the {len(required & set(best)):,} reserved and "
                         "single-character tokens this corpus needs")
    spare = vocab_size - len(required & set(best))
    kept = {token for token in best if token not in required}
    kept = set([token for token in best if token in kept][:spare])
    return [token for token in best if token in required or token in kept]


def train_wordpiece(
    corpus: Corpus,
    vocab_size: int,
    output_dir: PathLike,
    lowercase: bool = True,
    reserved_tokens: Sequence[str] = BERT_RESERVED_TOKENS,
    min_count: int = 2,
) -> WordPieceTokenizer:
    """Learns a BERT WordPiece vocabulary; writes `output_dir`/vocab.txt and returns the tokenizer.

    Example:
        >>> tokenizer = train_wordpiece("corpus.txt", vocab_size=500, output_dir="wordpiece/")
        >>> tokenizer.vocabulary_size()
        500
    """
    counts: collections.Counter[str] = collections.Counter()
    split = tf.function(lambda batch: wordpiece_tokenizer.split_words_with_offsets(
        as_utf8(batch), lowercase, keep_hangul=True)[0].flat_values)
    for batch in _line_batches(corpus):
        counts.update(word.decode("utf-8") for word in split(batch).numpy() if word)
    vocabulary = learn_exact_wordpiece(counts, vocab_size, reserved_tokens, min_count)
    tokenizer = WordPieceTokenizer(vocabulary, lowercase=lowercase)
    tokenizer.save_assets(output_dir)
    return tokenizer


def train_sentencepiece(
    corpus: Corpus,
    vocab_size: int,
    output_dir: PathLike,
    model_type: str = "unigram",
    lowercase: bool = False,
    control_tokens: Sequence[str] = ALBERT_CONTROL_TOKENS,
    character_coverage: float = 0.9995,
) -> SentencePieceTokenizer:
    """Trains a SentencePiece model ALBERT-style: `<pad>`=0, `<unk>`=1, then `control_tokens`
    ([CLS], [SEP], [MASK]); writes `output_dir`/spiece.model and returns the tokenizer.

    Example:
        >>> tokenizer = train_sentencepiece("botchan.txt", 1000, "sentencepiece/", model_type="bpe")
        >>> tokenizer.vocabulary_size()
        1000
    """
    if model_type not in ("unigram", "bpe"):
        raise ValueError(f"model_type must be 'unigram' or 'bpe', got {model_type!r}")
    lines = corpus_lines(corpus)
    sentences = (line.lower() for line in lines) if lowercase else lines
    model = sentencepiece_tokenizer.MODEL_FILE
    output = Path(output_dir)
    proto = io.BytesIO()
    try:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=sentences,
            model_writer=proto,
            vocab_size=vocab_size,
            model_type=model_type,
            character_coverage=character_coverage,
            pad_id=0,
            unk_id=1,
            bos_id=-1,
            eos_id=-1,
            control_symbols=list(control_tokens),
            minloglevel=2,
        )
    except RuntimeError as error:
        raise ValueError(_sentencepiece_size_message(str(error), vocab_size)) from None
    output.mkdir(parents=True, exist_ok=True)   # only now: a failed training leaves no folder
    (output / model).write_bytes(proto.getvalue())
    tokenizer = SentencePieceTokenizer(output / model, lowercase=lowercase)
    tokenizer.save_assets(output)
    return tokenizer


def _sentencepiece_size_message(error: str, vocab_size: int) -> str:
    """SentencePiece's trainer error about the vocabulary size, in the terms of `tfbert vocab`; else `error`."""
    most = re.search(r"Vocabulary size too high \(\d+\)\. Please set it to a value <= (\d+)", error)
    if most:
        return (f"vocab size {vocab_size}: this corpus gives at most {int(most.group(1)):,} SentencePiece pieces; "
                f"give a size up to {int(most.group(1)):,} or more text")
    least = re.search(r"Vocabulary size is smaller than required_chars\. \d+ vs (\d+)", error)
    if least:
        return (f"vocab size {vocab_size} is smaller than the {int(least.group(1)):,} characters and special tokens "
                f"this corpus needs; give at least {int(least.group(1)):,}")
    return error


def _count_pieces(corpus: Corpus) -> collections.Counter[bytes]:
    split = tf.function(lambda batch: byte_pair_tokenizer.split_pieces(batch).flat_values)
    counts: collections.Counter[bytes] = collections.Counter()
    for batch in _line_batches(corpus):
        counts.update(split(batch).numpy())
    return counts


def learn_byte_merges(piece_counts: dict[bytes, int], num_merges: int, min_count: int = 2) -> list[tuple[bytes, bytes]]:
    """Byte-level BPE training: repeatedly merges the most frequent adjacent pair (ties: the pair seen
    first) over the counted pieces, updating pair counts only in the pieces that contain it."""
    words = [[piece[i : i + 1] for i in range(len(piece))] for piece in piece_counts]
    weights = list(piece_counts.values())
    pair_counts: collections.Counter[tuple[bytes, bytes]] = collections.Counter()
    pair_words: dict[tuple[bytes, bytes], set[int]] = collections.defaultdict(set)
    for index, (symbols, weight) in enumerate(zip(words, weights)):
        for pair in zip(symbols, symbols[1:]):
            pair_counts[pair] += weight
            pair_words[pair].add(index)
    merges = []
    while len(merges) < num_merges and pair_counts:
        best = max(pair_counts.items(), key=lambda item: item[1])[0]
        if pair_counts[best] < min_count:
            break
        merges.append(best)
        joined = best[0] + best[1]
        for index in pair_words.pop(best):
            symbols, weight = words[index], weights[index]
            for pair in zip(symbols, symbols[1:]):
                pair_counts[pair] -= weight
                if pair_counts[pair] <= 0:
                    del pair_counts[pair]
            merged, at = [], 0
            while at < len(symbols):
                if at + 1 < len(symbols) and (symbols[at], symbols[at + 1]) == best:
                    merged.append(joined)
                    at += 2
                else:
                    merged.append(symbols[at])
                    at += 1
            words[index] = merged
            for pair in zip(merged, merged[1:]):
                pair_counts[pair] += weight
                pair_words[pair].add(index)
    return merges


def train_byte_bpe(
    corpus: Corpus,
    vocab_size: int,
    output_dir: PathLike,
    leading_tokens: Sequence[str] = ROBERTA_LEADING_TOKENS,
    trailing_tokens: Sequence[str] = ROBERTA_TRAILING_TOKENS,
    min_count: int = 2,
) -> BytePairTokenizer:
    """Trains RoBERTa-style byte-level BPE: ids are `leading_tokens` (<s>, <pad>, </s>, <unk>), the 256
    bytes, the merges, then `trailing_tokens` (<mask>). Writes vocab.json + merges.txt to `output_dir`.

    Example:
        >>> tokenizer = train_byte_bpe("corpus.txt", vocab_size=500, output_dir="bpe/")
        >>> tokenizer.vocabulary_size()
        500
    """
    fixed = len(leading_tokens) + 256 + len(trailing_tokens)
    if vocab_size < fixed:
        raise ValueError(f"vocab_size {vocab_size} is smaller than the {fixed} special and byte tokens")
    merges = learn_byte_merges(_count_pieces(corpus), vocab_size - fixed, min_count)
    if len(merges) < vocab_size - fixed:
        raise ValueError(f"vocab size {vocab_size}: this corpus gives at most {fixed + len(merges):,} byte-level BPE "
                         f"tokens (pairs seen at least {min_count} times); give a size up to {fixed + len(merges):,} or more text")
    spell = lambda raw: "".join(byte_pair_tokenizer.byte_alphabet()[b] for b in raw)  # noqa: E731
    tokens = list(leading_tokens) + [spell(bytes([b])) for b in range(256)]
    tokens += [spell(left + right) for left, right in merges] + list(trailing_tokens)
    tokenizer = BytePairTokenizer({token: index for index, token in enumerate(tokens)}, [f"{spell(a)} {spell(b)}" for a, b in merges])
    tokenizer.save_assets(output_dir)
    return tokenizer


def add_tokens(vocabulary: Tokenizer | PathLike, new_tokens: Sequence[str], output_dir: PathLike | None = None) -> int:
    """Appends `new_tokens` not already present to a WordPiece (vocab.txt) or byte-level BPE
    (vocab.json) vocabulary, keeping every existing id; returns the new vocabulary size.

    `vocabulary` is a tokenizer (its files are written to `output_dir`) or a vocab file, rewritten in
    place unless `output_dir` is given. New BPE tokens get ids but no merges: text never produces them.

    Example:
        >>> add_tokens("vocab.txt", ["[ENT]", "covid"], output_dir="vocab_more/")
        30524
    """
    if isinstance(vocabulary, (WordPieceTokenizer, BytePairTokenizer)):
        if output_dir is None:
            raise ValueError("add_tokens needs output_dir when given a tokenizer")
        vocabulary.save_assets(output_dir)
        name = wordpiece_tokenizer.VOCAB_FILE if isinstance(vocabulary, WordPieceTokenizer) else byte_pair_tokenizer.VOCAB_FILE
        return add_tokens(Path(output_dir) / name, new_tokens)
    if isinstance(vocabulary, Tokenizer):
        raise ValueError(f"add_tokens supports WordPiece and byte-level BPE vocabularies, not {type(vocabulary).__name__}; "
                         "insert_words (tfbert vocab add) adds words to any of the three")
    source = Path(vocabulary)
    target = source if output_dir is None else Path(output_dir) / source.name
    if source.suffix == ".json":
        mapping = read_json(source, "byte-level BPE vocabulary")
        if not isinstance(mapping, dict):
            raise ValueError(f"byte-level BPE vocabulary file {source} is not a JSON object")
        for token in new_tokens:
            mapping.setdefault(token, len(mapping))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(mapping, ensure_ascii=False), encoding="utf-8")
        return len(mapping)
    tokens = read_lines(source, "WordPiece vocabulary")
    present = set(tokens)
    tokens += [token for token in dict.fromkeys(new_tokens) if token not in present]
    _write_lines(target, tokens)
    return len(tokens)
