"""Silver STS data (Augmented SBERT, Thakur et al. 2021, https://arxiv.org/abs/2010.08240).

Pairs of unlabelled sentences are sampled (at random, by BM25 lexical overlap, or as nearest
neighbours by a bi-encoder's cosine), labelled by a fine-tuned cross-encoder (a regression model),
and written as `s1<TAB>s2<TAB>score`, the plain pair format `read_sentence_pairs` and
`tfbert finetune --task embedding` read, to train the bi-encoder on gold + silver pairs.

Example:
    >>> sentences = read_sentences("KorSTS/sts-train.tsv")
    >>> pairs = bm25_pairs(sentences, neighbours=3)
    >>> len(sentences), len(pairs)
    (12, 22)
    >>> scores = load_cross_encoder("runs/sts-cross").score(*pair_texts(sentences, pairs))  # a cross-encoder fine-tuned for minutes  # doctest: +SKIP
    >>> write_silver("silver.tsv", sentences, pairs, scores)   # the scores above  # doctest: +SKIP
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Sequence

import numpy as np

from tfbert.data.sentence_pairs import read_sentence_pairs
from tfbert.metrics import unit_rows

PLAIN_TEXT_SUFFIXES = ("", ".txt")
Pair = tuple[int, int]


def read_sentences(path: str | Path) -> list[str]:
    """Distinct sentences: one a line from a `.txt` file (or a file without extension), else every sentence of
    a sentence-pair file (KorSTS, KLUE, STS-B, JSON Lines, ...; see `read_sentence_pairs`).

    Example:
        >>> sentences = read_sentences("KorSTS/sts-train.tsv")    # both columns, each sentence once
        >>> len(sentences)
        12
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such sentence file")
    if path.suffix.lower() in PLAIN_TEXT_SUFFIXES:
        sentences = list(dict.fromkeys(line.strip() for line in path.read_text(encoding="utf-8-sig").splitlines()))
        return [sentence for sentence in sentences if sentence]
    return read_sentence_pairs(path).sentences()


def _ordered(pairs) -> list[Pair]:
    """Distinct unordered pairs of different sentences, each as (smaller index, larger), in first-seen order."""
    return list(dict.fromkeys((min(a, b), max(a, b)) for a, b in pairs if a != b))


def random_pairs(count: int, sentences: int, seed: int | None = None) -> list[Pair]:
    """`count` distinct random pairs of different sentences (fewer when there are not that many).

    Example:
        >>> random_pairs(2, 5, seed=0)
        [(3, 4), (1, 2)]
    """
    possible = sentences * (sentences - 1) // 2
    count = min(count, possible)
    rng = np.random.default_rng(seed)
    found: dict[Pair, None] = {}
    while len(found) < count:
        draws = rng.integers(0, sentences, size=(2 * (count - len(found)) + 8, 2))
        for pair in _ordered(map(tuple, draws.tolist())):
            found.setdefault(pair)
            if len(found) == count:
                break
    return list(found)


TERM = re.compile(r"\w+")


def bm25_terms(text: str) -> list[str]:
    """Lower-cased words, plus the character bigrams of words outside ASCII, so that Korean words match across
    particles and endings (비행기가 / 비행기는 share 비행, 행기)."""
    words = TERM.findall(text.lower())
    return words + [word[i:i + 2] for word in words if not word.isascii() for i in range(len(word) - 1)]


class BM25:
    """Okapi BM25 (k1 = 1.5, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5))) over `documents`, each also
    a query: `top(i, k)` gives the `k` best-scoring other documents for document i.

    Example:
        >>> BM25(["a cat sat", "a cat ran", "dogs bark"]).top(0, 1)
        [1]
    """

    def __init__(self, documents: Sequence[str], k1: float = 1.5, b: float = 0.75):
        self.terms = [Counter(bm25_terms(document)) for document in documents]
        lengths = np.array([sum(terms.values()) for terms in self.terms], np.float64)
        postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for index, terms in enumerate(self.terms):
            for term, frequency in terms.items():
                postings[term].append((index, frequency))
        count = len(documents)
        norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9))
        self.postings = {}
        for term, rows in postings.items():
            ids = np.array([index for index, _ in rows])
            frequencies = np.array([frequency for _, frequency in rows], np.float64)
            idf = math.log(1 + (count - len(rows) + 0.5) / (len(rows) + 0.5))
            self.postings[term] = (ids, idf * frequencies * (k1 + 1) / (frequencies + norm[ids]))
        self.count = count

    def scores(self, index: int) -> np.ndarray:
        """BM25 score of every document for document `index`'s terms as the query."""
        scores = np.zeros(self.count)
        for term in self.terms[index]:
            ids, weights = self.postings[term]
            scores[ids] += weights
        return scores

    def top(self, index: int, k: int) -> list[int]:
        scores = self.scores(index)
        scores[index] = -np.inf
        best = np.argsort(-scores, kind="stable")[:k]
        return [int(other) for other in best if scores[other] > 0]


def bm25_pairs(sentences: Sequence[str], neighbours: int = 3) -> list[Pair]:
    """Each sentence with its `neighbours` best BM25 matches among the others (pairs that share words).

    Example:
        >>> bm25_pairs(["a cat sat", "a cat ran", "dogs bark"], neighbours=1)
        [(0, 1)]
    """
    index = BM25(sentences)
    return _ordered((i, j) for i in range(len(sentences)) for j in index.top(i, neighbours))


def neighbour_pairs(embeddings: np.ndarray, neighbours: int = 3, block: int = 1024) -> list[Pair]:
    """Each sentence with its `neighbours` nearest others by the cosine of `embeddings` (semantic search).

    Example:
        >>> from tfbert.inference.text_models import load_text_embedder
        >>> sentences = ["a man plays the guitar", "a man is playing a guitar", "a cat sleeps", "the cat is asleep"]
        >>> pairs = neighbour_pairs(load_text_embedder("all-MiniLM-L6-v2/").embed(sentences), neighbours=1)
        >>> [(int(first), int(second)) for first, second in pairs]
        [(0, 1), (2, 3)]
    """
    vectors = unit_rows(embeddings)
    k = min(neighbours, len(vectors) - 1)
    pairs = []
    for start in range(0, len(vectors), block):
        similarity = vectors[start:start + block] @ vectors.T
        rows = np.arange(len(similarity))
        similarity[rows, rows + start] = -np.inf
        best = np.argsort(-similarity, axis=1, kind="stable")[:, :k]
        pairs += [(start + row, int(other)) for row in rows for other in best[row]]
    return _ordered(pairs)


def pair_texts(sentences: Sequence[str], pairs: Sequence[Pair]) -> tuple[list[str], list[str]]:
    """The first and second texts of `pairs` (indices into `sentences`)."""
    return [sentences[a] for a, _ in pairs], [sentences[b] for _, b in pairs]


def write_silver(path: str | Path, sentences: Sequence[str], pairs: Sequence[Pair], scores: np.ndarray) -> int:
    """Writes `s1<TAB>s2<TAB>score` lines (tabs and line breaks inside sentences become spaces); returns the count."""
    def clean(text: str) -> str:
        return " ".join(text.split())

    if not np.isfinite(scores).all():   # never a `nan` score in a file the next finetune trains on
        raise ValueError(f"{int(np.sum(~np.isfinite(scores)))} of the {len(scores)} scores are not finite; "
                         f"nothing written to {path}")

    lines = [f"{clean(sentences[a])}\t{clean(sentences[b])}\t{float(score):.4f}\n"
             for (a, b), score in zip(pairs, scores)]
    Path(path).write_text("".join(lines), encoding="utf-8")
    return len(lines)
