"""Sentence-pair readers on files written in the exact layouts of KorSTS, KorNLI, KLUE, STS-B, plain TSV, JSON Lines."""

import json

import numpy as np
import pytest

from tfbert.data.sentence_pairs import (PairFileError, combine_pairs, detect_pair_format, normalise_scores,
                                         read_sentence_pairs, score_range)

KORSTS = ("genre\tfilename\tyear\tid\tscore\tsentence1\tsentence2\n"
          "main-captions\tMSRvid\t2012test\t0001\t5.000\t비행기가 이륙하고 있다.\t비행기가 이륙하고 있다.\n"
          "main-captions\tMSRvid\t2012test\t0004\t3.800\t한 남자가 큰 플루트를 연주하고 있다.\t남자가 플루트를 연주하고 있다.\n"
          "main-news\theadlines\t2015\t0013\t0.000\t\"그는 말했다 \t한 여자가 고기를 자르고 있다.\n")
KORNLI = ("sentence1\tsentence2\tgold_label\n"
          "개념적으로 크림 스키밍은 두 가지 기본 차원을 가지고 있다.\t제품과 지리학은 크림 스키밍을 작동시키는 것이다.\tneutral\n"
          "시즌 중에 알고 있는 거 알아?\t시즌 중에 너는 무엇을 알고 있을까?\tentailment\n"
          "한 남자가 말을 탄다.\t남자가 소파에서 잠을 잔다.\t-\n"
          "한 남자가 말을 탄다.\t남자가 밖에 있다.\tcontradiction\n")
STSB = ("index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n"
        "0\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\tA plane is taking off.\tAn air plane is taking off.\t5.000\n"
        "1\tmain-captions\tMSRvid\t2012test\t0004\tnone\tnone\tA man is playing a large flute.\tA man is playing a flute.\t3.800\n")
KLUE_STS = [
    {"guid": "klue-sts-v1_train_00000", "source": "airbnb-rtt", "sentence1": "숙소 위치는 찾기 쉽고 일반적인 한국의 반지하 숙소입니다.",
     "sentence2": "숙박시설의 위치는 쉽게 찾을 수 있고 한국의 대표적인 반지하 숙박시설입니다.",
     "labels": {"label": 3.7, "real-label": 3.714285714285714, "binary-label": 1},
     "annotations": {"agreement": "0:0:0:2:5:0", "annotators": ["07", "13"], "annotations": [3, 4]}},
    {"guid": "klue-sts-v1_train_00001", "source": "policy-sampled", "sentence1": "위반행위 조사 등을 거부·방해·기피한 자는 500만원 이하 과태료 부과 대상이다.",
     "sentence2": "시민들 스스로 자발적인 예방 노력을 한 것은 아산 뿐만이 아니었다.",
     "labels": {"label": 0.0, "real-label": 0.0, "binary-label": 0},
     "annotations": {"agreement": "5:0:0:0:0:0", "annotators": ["00"], "annotations": [0]}},
]
KLUE_NLI = [
    {"guid": "klue-nli-v1_train_00000", "source": "NSMC", "premise": "힛걸 진심 최고다 그 어떤 히어로보다 멋지다",
     "hypothesis": "힛걸 진심 최고로 멋지다.", "gold_label": "entailment", "author": "entailment",
     "label2": "entailment", "label3": "entailment", "label4": "entailment", "label5": "entailment"},
    {"guid": "klue-nli-v1_train_00001", "source": "NSMC", "premise": "100분간 잘껄 그래도 소닉붐땜에 2점준다",
     "hypothesis": "100분간 잤다.", "gold_label": "contradiction", "author": "contradiction",
     "label2": "contradiction", "label3": "contradiction", "label4": "contradiction", "label5": "contradiction"},
]


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name, text, format, kind, labels", [
    ("sts-dev.tsv", KORSTS, "korsts", "score", [5.0, 3.8, 0.0]),
    ("snli_1.0_train.ko.tsv", KORNLI, "kornli", "nli", [1, 0, 2]),
    ("sts-dev.tsv", STSB, "stsb", "score", [5.0, 3.8]),
    ("klue-sts-v1.1_train.json", json.dumps(KLUE_STS, ensure_ascii=False, indent=4), "klue-sts", "score", [3.7, 0.0]),
    ("klue-nli-v1.1_train.json", json.dumps(KLUE_NLI, ensure_ascii=False, indent=4), "klue-nli", "nli", [0, 2]),
    ("silver.tsv", "a cat sits\ta cat is sitting\t4.5\nthe sky\ta car\t0.25\n", "pairs", "score", [4.5, 0.25]),
    ("pairs.jsonl", '{"sentence1": "a", "sentence2": "b", "score": 0.5}\n\n{"sentence1": "c", "sentence2": "d", "score": 1}\n',
     "jsonl", "score", [0.5, 1.0]),
    ("nli.jsonl", '{"premise": "a", "hypothesis": "b", "label": "neutral"}\n', "jsonl", "nli", [1]),
])
def test_each_format_is_detected_and_read(tmp_path, name, text, format, kind, labels):
    path = write(tmp_path / name, text)
    pairs = read_sentence_pairs(path)
    assert detect_pair_format(path) == format and pairs.format == format and pairs.kind == kind
    np.testing.assert_allclose(pairs.labels, labels)
    assert len(pairs.first) == len(pairs.second) == len(labels) and all(pairs.first) and all(pairs.second)


def test_korsts_keeps_quotes_and_korean_text_and_knows_its_scale(tmp_path):
    pairs = read_sentence_pairs(write(tmp_path / "sts-train.tsv", KORSTS))
    assert pairs.first[2] == '"그는 말했다 ' and pairs.second[1] == "남자가 플루트를 연주하고 있다."
    assert score_range(pairs) == (0.0, 5.0)
    np.testing.assert_allclose(normalise_scores(pairs.labels, score_range(pairs)), [1.0, 0.76, 0.0], rtol=1e-6)


def test_plain_files_hold_unlabelled_pairs_or_triplets_and_scales_are_detected(tmp_path):
    pairs = read_sentence_pairs(write(tmp_path / "pairs.txt", "a question\tits answer\nanother\tone more\n"))
    assert pairs.kind == "unlabelled" and pairs.labels is None
    triplets = read_sentence_pairs(write(tmp_path / "triplets.tsv", "anchor\tpositive\thard negative\n"))
    assert triplets.kind == "triplet" and triplets.third == ["hard negative"]
    jsonl = read_sentence_pairs(write(tmp_path / "t.jsonl", '{"anchor": "a", "positive": "p", "negative": "n"}\n'))
    assert jsonl.kind == "triplet" and jsonl.third == ["n"]
    silver = read_sentence_pairs(write(tmp_path / "silver.tsv", "a\tb\t0.3\nc\td\t4.8\n"))
    assert score_range(silver) == (0.0, 5.0)
    assert score_range(read_sentence_pairs(write(tmp_path / "unit.tsv", "a\tb\t0.3\nc\td\t1\n"))) == (0.0, 1.0)
    assert score_range(read_sentence_pairs(write(tmp_path / "wide.tsv", "a\tb\t3\nc\td\t250\n"))) == (3.0, 250.0)
    gold = read_sentence_pairs(write(tmp_path / "gold.tsv", KORSTS))
    both = combine_pairs([gold, silver])
    assert len(both) == 5 and both.format == "korsts+pairs" and both.first[-1] == "c"


def test_forcing_a_format(tmp_path):
    path = write(tmp_path / "data.txt", "genre\tfilename\tyear\tid\tscore\tsentence1\tsentence2\n"
                                        "g\tf\t2012\t1\t2.5\tone\ttwo\n")
    assert read_sentence_pairs(path, format="korsts").labels.tolist() == [2.5]
    with pytest.raises(ValueError, match="unknown pair format 'csv'"):
        read_sentence_pairs(path, format="csv")


@pytest.mark.parametrize("name, text, message", [
    ("sts-dev.tsv", KORSTS.replace("3.800", "high"), r"sts-dev.tsv, line 3, column 'score': expected a number, got 'high'"),
    ("sts-dev.tsv", KORSTS + "main\tx\t2012\t9\t1.0\tonly one sentence\n",
     r"sts-dev.tsv, line 5: expected 7 tab-separated fields \(genre, .*\), got 6"),
    ("sts-dev.tsv", KORSTS.replace("비행기가 이륙하고 있다.\n", "\n"),
     r"sts-dev.tsv, line 2, column 'sentence2': expected a non-empty sentence"),
    ("nli.tsv", KORNLI.replace("\tneutral", "\tNEUTRAL"),
     r"nli.tsv, line 2, column 'gold_label': expected one of entailment, neutral, contradiction \(or '-'\), got 'NEUTRAL'"),
    ("klue.json", json.dumps(KLUE_STS[:1] + [{"sentence1": "a", "sentence2": "b", "labels": {}}], indent=2),
     r"klue.json, line 24: missing field 'labels.label' \(found: \)"),
    ("klue.json", '{"data": []}', r"klue.json, line 1: expected a JSON array of objects"),
    ("pairs.tsv", "a\tb\t1.0\nc\td\n", r"pairs.tsv, line 2: this row is a pair row but the file started with score rows"),
    ("pairs.tsv", "a\tb\tc\td\n", r"pairs.tsv, line 1: expected 2 or 3 tab-separated fields"),
    ("pairs.jsonl", '{"sentence1": "a", "sentence2": "b"}\n{"text": "c"}\n',
     r"pairs.jsonl, line 2: expected fields sentence1 / premise / anchor and sentence2 / hypothesis / positive"),
    ("pairs.jsonl", '{"sentence1": "a", "sentence2": "b", "score": "NaN"}\n',
     r"pairs.jsonl, line 1, column 'score': expected a finite number"),
    ("empty.tsv", "", r"empty.tsv: no sentence pairs in the file \(read as pairs\)"),
])
def test_malformed_rows_name_the_file_line_and_problem(tmp_path, name, text, message):
    with pytest.raises(PairFileError, match=message):
        read_sentence_pairs(write(tmp_path / name, text))


def test_combining_files_of_different_kinds_is_refused(tmp_path):
    nli = read_sentence_pairs(write(tmp_path / "nli.tsv", KORNLI))
    sts = read_sentence_pairs(write(tmp_path / "sts.tsv", KORSTS))
    with pytest.raises(ValueError, match="different kinds of pairs \\(nli, score\\)"):
        combine_pairs([nli, sts])
    with pytest.raises(FileNotFoundError, match="missing.tsv: no such data file"):
        read_sentence_pairs(tmp_path / "missing.tsv")
