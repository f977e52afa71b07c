"""Sentence embeddings from the command line: finetune --task embedding (each loss), export, evaluate sts,
augment and distill, on a tiny encoder with MiniLM's WordPiece vocabulary and data written here."""

import json

import numpy as np
import pytest

from tfbert.cli import main
from tfbert.data.sentence_pairs import KORSTS_COLUMNS

pytestmark = pytest.mark.end_to_end

GROUPS = [["cat", "dog", "horse", "cow", "sheep", "bird"], ["bread", "cheese", "apple", "rice", "soup", "cake"],
          ["rain", "snow", "wind", "storm", "cloud", "sun"], ["football", "tennis", "golf", "chess", "boxing", "rugby"]]
FILLER = ["the", "and", "with", "very", "some", "near"]
COMMON = ["--strategy", "cpu", "--seed", "0", "--max-length", "16"]


def sentence(rng, group):
    words = [*rng.choice(GROUPS[group], 2, replace=False), *rng.choice(FILLER, 2)]
    return " ".join(rng.permutation(words))


def topic_pairs(rng, count):
    """Pairs of sentences about the same topic (score 4-5) or different ones (0-1), on the STS 0-5 scale."""
    rows = []
    for _ in range(count):
        group = int(rng.integers(4))
        same = rng.random() < 0.5
        other = group if same else int((group + rng.integers(1, 4)) % 4)
        rows.append((sentence(rng, group), sentence(rng, other), float(rng.uniform(4, 5) if same else rng.uniform(0, 1))))
    return rows


def write_korsts(path, rows):
    lines = ["\t".join(KORSTS_COLUMNS)] + [f"main-captions\tMSRvid\t2012test\t{index:04d}\t{score:.3f}\t{a}\t{b}"
                                            for index, (a, b, score) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, assets):
    """A tiny random encoder with MiniLM's vocabulary (`pretrained/`), KorSTS-format train and dev files."""
    import keras

    from tfbert.config import EncoderConfig
    from tfbert.models.encoder import Encoder
    from tfbert.text import WordPieceTokenizer

    root = tmp_path_factory.mktemp("embeddings")
    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"))
    config = EncoderConfig(vocab_size=tokenizer.vocabulary_size(), hidden_size=32, num_layers=1, num_heads=2,
                           intermediate_size=64, max_positions=64)
    keras.utils.set_random_seed(0)
    (root / "pretrained").mkdir()
    Encoder(config, name="encoder").save(root / "pretrained" / "encoder.keras")
    tokenizer.save_assets(root / "pretrained" / "tokenizer")
    rng = np.random.default_rng(0)
    write_korsts(root / "sts-train.tsv", topic_pairs(rng, 160))
    write_korsts(root / "sts-dev.tsv", topic_pairs(rng, 48))
    return root


@pytest.fixture(scope="module")
def embedding_dir(workspace):
    """`finetune --task embedding --loss cosine` on the KorSTS-format files."""
    arguments = ["finetune", "--task", "embedding", "--pretrained", str(workspace / "pretrained"),
                 "--train", str(workspace / "sts-train.tsv"), "--eval", str(workspace / "sts-dev.tsv"),
                 "--model-dir", str(workspace / "sts"), "--epochs", "3", "--batch-size", "16",
                 "--learning-rate", "1e-2", *COMMON]
    assert main(arguments) == 0
    return workspace / "sts"


def evaluate_json(capsys, *arguments):
    assert main(["evaluate", "sts", *arguments, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cosine_training_writes_an_embedding_model_dir_that_export_and_evaluate_take(workspace, embedding_dir, capsys):
    import tensorflow as tf

    task = json.loads((embedding_dir / "task.json").read_text())
    assert task["task"] == "embedding" and task["pooling"] == "mean" and task["normalize"] is True
    assert task["loss"] == "cosine" and task["score_range"] == [0.0, 5.0] and task["max_length"] == 16
    dev = str(workspace / "sts-dev.tsv")
    before = evaluate_json(capsys, str(workspace / "pretrained"), "--data", dev, "--max-length", "16")
    assert main(["evaluate", "sts", str(embedding_dir), "--data", dev, dev]) == 0
    title, header, *rows = capsys.readouterr().out.splitlines()
    assert title.endswith("cosine of the embeddings against the gold scores") and len(rows) == 2
    assert header.split() == ["file", "format", "pairs", "pearson", "spearman"] and rows[0].split()[1:3] == ["korsts", "48"]
    trained = float(rows[0].split()[-1])
    assert trained > 0.5 and trained > before["files"][0]["spearman"] + 0.2
    best = json.loads((embedding_dir / "best.json").read_text())
    assert best["scores"]["spearman_correlation"] == pytest.approx(trained, abs=1e-4)

    assert main(["export", str(embedding_dir), "--name", "sts", "--output-dir", str(workspace / "saved"),
                 "--sequence-length", "16"]) == 0
    capsys.readouterr()
    served = tf.saved_model.load(str(workspace / "saved" / "sts" / "1")).signatures["serving_default"]
    vectors = served(text=tf.constant(["the cat and the dog", "rain and snow", ""]))["embedding"].numpy()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    for source in (workspace / "saved" / "sts", embedding_dir / "best.keras"):
        again = evaluate_json(capsys, str(source), "--data", dev)
        assert again["files"][0]["spearman"] == pytest.approx(trained, abs=1e-3)


NLI = "sentence1\tsentence2\tgold_label\n" + "".join(
    f"{a}\t{b}\t{label}\n" for a, b, label in [("the cat and the dog", "a dog", "entailment"),
                                              ("rain with snow", "the sun", "contradiction"),
                                              ("some bread", "the cake", "neutral"), ("golf", "chess", "-")] * 8)


@pytest.mark.parametrize("loss, name, text, options", [
    ("softmax", "snli_1.0_train.ko.tsv", NLI, []),
    ("multiple-negatives", "triplets.tsv", "the cat\ta dog near\tsome rain\nsoup\tbread and cake\tgolf\n" * 16,
     ["--symmetric", "--pooling", "max"]),
])
def test_each_loss_trains_from_its_file_format(workspace, capsys, loss, name, text, options):
    (workspace / name).write_text(text, encoding="utf-8")
    model_dir = workspace / f"run-{loss}"
    assert main(["finetune", "--task", "embedding", "--pretrained", str(workspace / "pretrained"), "--train",
                 str(workspace / name), "--eval", str(workspace / "sts-dev.tsv"), "--model-dir", str(model_dir),
                 "--loss", loss, "--epochs", "1", "--batch-size", "8", *options, *COMMON]) == 0
    assert "best epoch 1: pearson_correlation" in capsys.readouterr().out
    task = json.loads((model_dir / "task.json").read_text())
    assert task["loss"] == loss and task["pooling"] == ("max" if options else "mean")


@pytest.mark.parametrize("arguments, message", [
    (["--loss", "softmax"], "the softmax loss trains on NLI pairs labelled entailment, neutral, contradiction; the "
                            "korsts data holds score rows"),
    (["--loss", "contrastive"], "the contrastive loss needs labels 1 (similar) or 0 (not); found [0."),
    (["--loss", "triplet"], "unknown embedding loss 'triplet'; expected one of cosine, contrastive"),
    (["--score-range", "5", "0"], "--score-range 5 0: give LOW below HIGH"),
    (["--format", "csv"], "unknown pair format 'csv'"),
])
def test_embedding_mistakes_end_with_one_line(workspace, capsys, arguments, message):
    assert main(["finetune", "--task", "embedding", "--pretrained", str(workspace / "pretrained"), "--train",
                 str(workspace / "sts-train.tsv"), "--eval", str(workspace / "sts-dev.tsv"), "--model-dir",
                 str(workspace / "never"), *arguments, *COMMON]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tfbert finetune: error: ") and message in err and err.count("\n") == 1


@pytest.mark.slow
def test_cross_encoder_scores_silver_pairs_that_train_the_bi_encoder_with_the_gold(workspace, embedding_dir, capsys):
    from tfbert.tasks import read_sentence_pairs

    cross = workspace / "cross"
    assert main(["finetune", "--task", "regression", "--pretrained", str(workspace / "pretrained"), "--train",
                 str(workspace / "sts-train.tsv"), "--eval", str(workspace / "sts-dev.tsv"), "--text-columns",
                 "sentence1", "sentence2", "--label-column", "score", "--model-dir", str(cross), "--epochs", "1",
                 "--batch-size", "16", *COMMON]) == 0
    capsys.readouterr()
    report = evaluate_json(capsys, str(cross), "--cross-encoder", "--data", str(workspace / "sts-dev.tsv"))
    assert report["scorer"] == "cross-encoder score" and report["files"][0]["pairs"] == 48
    rng = np.random.default_rng(1)
    (workspace / "sentences.txt").write_text("\n".join(sentence(rng, i % 4) for i in range(40)) + "\n")
    for sampler, extra in [("bm25", []), ("random", ["--count", "25"]),
                           ("embedding-neighbours", ["--bi-encoder", str(embedding_dir), "--neighbours", "2"])]:
        output = workspace / f"silver-{sampler}.tsv"
        assert main(["augment", "--cross-encoder", str(cross), "--sentences", str(workspace / "sentences.txt"),
                     "--pairs", sampler, "--output", str(output), "--seed", "0", *extra]) == 0
        assert f"wrote {output}: " in capsys.readouterr().out
        silver = read_sentence_pairs(output)
        assert silver.kind == "score" and len(silver) >= 25 and 0.0 <= silver.labels.min() <= silver.labels.max() <= 5.0
    assert main(["finetune", "--task", "embedding", "--pretrained", str(embedding_dir), "--train",
                 str(workspace / "sts-train.tsv"), str(workspace / "silver-bm25.tsv"), "--eval",
                 str(workspace / "sts-dev.tsv"), "--model-dir", str(workspace / "gold-silver"), "--epochs", "1",
                 *COMMON]) == 0
    assert json.loads((workspace / "gold-silver" / "task.json").read_text())["score_range"] == [0.0, 5.0]
    assert main(["augment", "--cross-encoder", str(embedding_dir), "--sentences", str(workspace / "sentences.txt"),
                 "--pairs", "bm25", "--output", str(workspace / "x.tsv")]) == 2
    assert "expected a regression model" in capsys.readouterr().err


def verse_pairs(assets, count):
    from tfbert.data.sword import ZTextModule, aligned_verses

    folder = assets("sword/modules/texts/ztext")
    verses = aligned_verses(ZTextModule(folder / "engKJV2006eb"), ZTextModule(folder / "spaRV1909eb"))
    return [next(verses) for _ in range(count)]


def test_distill_learns_the_teachers_embeddings_and_warns_about_an_uncovered_language(workspace, embedding_dir,
                                                                                     assets, capsys):
    pairs = verse_pairs(assets, 80)
    (workspace / "en-es.tsv").write_text("".join(f"{en}\t{es}\n" for _, en, es in pairs[:60]), encoding="utf-8")
    (workspace / "dev.en").write_text("".join(f"{en}\n" for _, en, _ in pairs[60:]), encoding="utf-8")
    (workspace / "dev.es").write_text("".join(f"{es}\n" for _, _, es in pairs[60:]), encoding="utf-8")
    arguments = ["distill", "--teacher", str(embedding_dir), "--student", str(workspace / "pretrained"),
                 "--epochs", "1", "--batch-size", "16", *COMMON]
    assert main([*arguments, "--parallel", str(workspace / "en-es.tsv"), "--eval", str(workspace / "dev.en"),
                 str(workspace / "dev.es"), "--model-dir", str(workspace / "distilled")]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err
    assert "best epoch 1 on 20 evaluation pairs: MSE " in captured.out and "target->source" in captured.out
    task = json.loads((workspace / "distilled" / "task.json").read_text())
    assert task["task"] == "embedding" and task["loss"] == "distillation"
    assert evaluate_json(capsys, str(workspace / "distilled"), "--data", str(workspace / "sts-dev.tsv"))["files"]

    korean = [line.strip() for line in assets("text/ko/constitution.txt").read_text(encoding="utf-8").splitlines()
              if len(line.strip()) > 10][:30]
    (workspace / "en.txt").write_text("".join(f"{en}\n" for _, en, _ in pairs[:30]), encoding="utf-8")
    (workspace / "ko.txt").write_text("\n".join(korean) + "\n", encoding="utf-8")
    # The warning comes before anything is loaded; a missing teacher then stops the run.
    assert main([*arguments[:2], str(workspace / "no-teacher"), *arguments[3:], "--parallel", str(workspace / "en.txt"),
                 str(workspace / "ko.txt"), "--model-dir", str(workspace / "distilled-ko")]) == 2
    warning, error = capsys.readouterr().err.splitlines()
    assert warning.startswith("tfbert distill: warning: the student's tokenizer maps ") and "tfbert vocab add" in warning
    assert error.startswith("tfbert distill: error: model ") and "no-teacher' does not exist" in error
    assert main([*arguments, "--parallel", str(workspace / "en.txt"), str(workspace / "dev.es"),
                 "--model-dir", str(workspace / "never")]) == 2
    assert "parallel files are not aligned" in capsys.readouterr().err
    minilm = str(assets("minilm/config.json").parent)   # a Hugging Face teacher of another size
    assert main(["distill", "--teacher", minilm, *arguments[3:], "--parallel", str(workspace / "en-es.tsv"),
                 "--model-dir", str(workspace / "never")]) == 2
    assert "the student's embeddings have 32 dimensions and the teacher's 384" in capsys.readouterr().err
