"""Silver-pair sampling (BM25, random, nearest neighbours), and silver files read back as sentence pairs."""

import math
from collections import Counter

import numpy as np

from tfbert.data.sentence_pairs import read_sentence_pairs
from tfbert.data.silver import BM25, bm25_pairs, bm25_terms, neighbour_pairs, random_pairs, read_sentences, write_silver

SENTENCES = ["a cat sat on the mat", "the cat ran after a dog", "dogs bark at the mailman", "rain falls on the roof",
             "heavy rain falls at night", "the mat is red"]


def naive_bm25(documents, query_index, k1=1.5, b=0.75):
    """Okapi BM25 written out term by term, the reference for the vectorised index."""
    terms = [Counter(bm25_terms(document)) for document in documents]
    average = sum(sum(t.values()) for t in terms) / len(terms)
    scores = []
    for document in terms:
        score = 0.0
        for term in terms[query_index]:
            df = sum(term in other for other in terms)
            idf = math.log(1 + (len(terms) - df + 0.5) / (df + 0.5))
            tf = document[term]
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * sum(document.values()) / average))
        scores.append(score)
    return np.array(scores)


def test_bm25_scores_equal_the_formula_and_pair_sentences_that_share_words():
    index = BM25(SENTENCES)
    for query in range(len(SENTENCES)):
        np.testing.assert_allclose(index.scores(query), naive_bm25(SENTENCES, query), rtol=1e-12)
    assert index.top(3, 1) == [4] and sorted(index.top(0, 2)) == [1, 5]
    pairs = bm25_pairs(SENTENCES, neighbours=1)
    assert (0, 5) in pairs and (3, 4) in pairs and all(a < b for a, b in pairs) and len(set(pairs)) == len(pairs)


def test_korean_words_match_across_particles_through_character_bigrams():
    assert set(bm25_terms("비행기가 이륙")) >= {"비행기가", "비행", "행기", "기가", "이륙"}
    korean = ["비행기가 이륙하고 있다", "비행기는 하늘을 난다", "고양이가 잔다"]
    assert BM25(korean).top(0, 1) == [1]


def test_random_and_neighbour_pairs_are_distinct_pairs_of_different_sentences():
    pairs = random_pairs(12, 6, seed=0)
    assert len(pairs) == 12 == len(set(pairs)) and all(0 <= a < b < 6 for a, b in pairs)
    assert len(random_pairs(100, 4, seed=0)) == 6   # every pair of 4 sentences
    embeddings = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]], "float32")
    assert sorted(neighbour_pairs(embeddings, neighbours=1)) == [(0, 1), (2, 3)]
    assert sorted(neighbour_pairs(embeddings, neighbours=1, block=3)) == [(0, 1), (2, 3)]


def test_sentences_come_from_text_lines_or_pair_files_and_silver_reads_back(tmp_path):
    (tmp_path / "s.txt").write_text("one\n\ntwo\none\n", encoding="utf-8")
    assert read_sentences(tmp_path / "s.txt") == ["one", "two"]
    (tmp_path / "pairs.tsv").write_text("a\tb\t1.0\nb\tc\t2.0\n", encoding="utf-8")
    assert read_sentences(tmp_path / "pairs.tsv") == ["a", "b", "c"]
    written = write_silver(tmp_path / "silver.tsv", ["x\ty", "z\nw", "v"], [(0, 1), (1, 2)], np.array([4.25, 0.5]))
    silver = read_sentence_pairs(tmp_path / "silver.tsv")
    assert written == 2 and silver.first == ["x y", "z w"] and silver.labels.tolist() == [4.25, 0.5]
