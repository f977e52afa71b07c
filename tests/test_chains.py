"""The chain matrix: what one tfbert command writes, the next one reads, with the numbers carried through.

`PRODUCERS` builds each artifact once per module (a tiny sentence-transformers BERT with MiniLM's
vocabulary, `mean` pooling, `Normalize` and `max_seq_length` 24 is the outside source); `CELLS` pairs a
producer with a consumer, and each cell asserts what must survive the seam: token ids, outputs, labels,
pooling and normalisation, not only an exit status. A new command adds a producer or a consumer row.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from finetuning.test_sentence_embedding_cli import topic_pairs, write_korsts
from tfbert import artifacts
from tfbert.cli import main

pytestmark = pytest.mark.end_to_end

TEXTS = ["A man is playing a guitar.", "The quick brown fox jumps over the lazy dog.", "Rain and snow near the sun."]
COMMON = ["--strategy", "cpu", "--seed", "0"]
ST_LENGTH = 24
LABELS = ["negative", "positive"]
SHORT_RUN = ["--objectives", "mlm", "--steps", "2", "--batch-size", "2", "--sequence-length", "16",
             "--max-predictions", "2", "--checkpoint-every", "2", "--strategy", "cpu", "--seed", "0"]
# Two optimizer steps move no weight of a source by more than this (a random start differs by ~0.1).
TWO_STEPS = 5e-3


def _sentence_transformers_folder(folder: Path, vocabulary: Path) -> Path:
    """A random 2-layer BERT saved by sentence-transformers with mean pooling, Normalize and max_seq_length."""
    import transformers
    from sentence_transformers import SentenceTransformer, models

    transformers.set_seed(0)
    hf = folder / "hf"
    config = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=37, max_position_embeddings=64)
    transformers.BertModel(config).save_pretrained(hf)
    transformers.BertTokenizerFast(str(vocabulary), do_lower_case=True).save_pretrained(hf)
    transformer = models.Transformer(str(hf), max_seq_length=ST_LENGTH)
    model = SentenceTransformer(modules=[transformer, models.Pooling(32, "mean"), models.Normalize()], device="cpu")
    model.save(str(folder / "st"))
    return folder / "st"


class Workspace:
    """The inputs every producer shares and each artifact, built on first use and kept for the module."""

    def __init__(self, root: Path, assets):
        self.root = root
        self.st = _sentence_transformers_folder(root, assets("minilm/vocab.txt"))
        rng = np.random.default_rng(0)
        self.train = write_korsts(root / "sts-train.tsv", topic_pairs(rng, 48))
        self.dev = write_korsts(root / "sts-dev.tsv", topic_pairs(rng, 16))
        corpus = root / "corpus.txt"
        corpus.write_text("\n\n".join("\n".join(TEXTS * 3) for _ in range(4)) + "\n", encoding="utf-8")
        self.corpus = str(corpus)
        self.built: dict[str, Path] = {}

    def __getitem__(self, name: str) -> Path:
        if name not in self.built:
            output = self.root / name.replace(" ", "_").replace("-", "")
            self.built[name] = PRODUCERS[name](self, output)
        return self.built[name]

    def st_embeddings(self) -> np.ndarray:
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(self.st), device="cpu").encode(TEXTS)


def _run(*arguments: str) -> None:
    assert main([str(argument) for argument in arguments]) == 0, arguments


def produce_vocab(work: Workspace, output: Path) -> Path:
    _run("vocab", "--kind", "wordpiece", "--data", work.corpus, "--vocab-size", "60", "--output", output)
    return output


def produce_vocab_add(work: Workspace, output: Path) -> Path:
    words = work.root / "words.txt"
    words.write_text("guitarist\nsnowstorm\n", encoding="utf-8")
    _run("vocab", "add", work["vocab"], "--tokens", words, "--output", output)
    return output


def produce_convert_st(work: Workspace, output: Path) -> Path:
    _run("convert", "huggingface", work.st, "-o", output / "st.keras")
    return output / "st.keras"


def produce_pretrain_init_from_st(work: Workspace, output: Path) -> Path:
    _run("pretrain", "--init-from", work.st, "--objectives", "mlm", "--data", work.corpus, "--model-dir", output,
         "--steps", "2", "--batch-size", "2", "--sequence-length", "16", "--max-predictions", "2",
         "--checkpoint-every", "2", "--strategy", "cpu")
    return output


def produce_pretrain_from_vocab(work: Workspace, output: Path) -> Path:
    """BERT-Tiny from scratch on `tfbert vocab`'s vocabulary."""
    _run("pretrain", "--config", "bert_tiny", "--tokenizer", work["vocab"], "--data", work.corpus,
         "--model-dir", output, *SHORT_RUN)
    return output


def produce_pretrain_init_from(source: str) -> Callable[[Workspace, Path], Path]:
    def produce(work: Workspace, output: Path) -> Path:
        _run("pretrain", "--init-from", work[source], "--data", work.corpus, "--model-dir", output, *SHORT_RUN)
        return output
    return produce


def produce_finetune_classification(work: Workspace, output: Path) -> Path:
    """A two-label classifier fine-tuned from the run pretrained on `tfbert vocab`'s vocabulary."""
    rows = "".join(f"{text}\t{LABELS[index % 2]}\n" for index, text in enumerate(TEXTS * 4))
    (work.root / "labelled.tsv").write_text("sentence\tlabel\n" + rows, encoding="utf-8")
    _run("finetune", "--pretrained", work["pretrain from vocab"], "--train", work.root / "labelled.tsv",
         "--eval", work.root / "labelled.tsv", "--label-names", *LABELS, "--model-dir", output, "--epochs", "1",
         "--batch-size", "4", "--max-length", "16", *COMMON)
    return output


def produce_keras_hub_preset(work: Workspace, output: Path) -> Path:
    """A random keras-hub BERT backbone and its tokenizer saved with `save_to_preset` (kept as the reference)."""
    import keras
    import keras_hub

    keras.utils.set_random_seed(0)
    letters = [chr(code) for code in range(ord("a"), ord("z") + 1)]
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *letters, *(f"##{c}" for c in letters), "the", "."]
    work.keras_hub_backbone = keras_hub.models.BertBackbone(vocabulary_size=len(vocabulary), num_layers=2, num_heads=2,
                                                            hidden_dim=16, intermediate_dim=24, max_sequence_length=32)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True)
    output.mkdir()
    work.keras_hub_backbone.save_to_preset(str(output))
    tokenizer.save_to_preset(str(output))
    return output


def produce_convert_keras_hub(work: Workspace, output: Path) -> Path:
    _run("convert", "keras-hub", work["keras-hub preset"], "-o", output / "model.keras")
    return output / "model.keras"


def produce_finetune_regression(work: Workspace, output: Path) -> Path:
    _run("finetune", "--task", "regression", "--pretrained", work.st, "--train", work.train, "--eval", work.dev,
         "--text-columns", "sentence1", "sentence2", "--label-column", "score", "--model-dir", output,
         "--epochs", "1", "--batch-size", "16", "--max-length", "16", *COMMON)
    return output


def produce_finetune_embedding(work: Workspace, output: Path) -> Path:
    _run("finetune", "--task", "embedding", "--pretrained", work["convert huggingface"], "--train", work.train,
         "--eval", work.dev, "--model-dir", output, "--epochs", "1", "--batch-size", "16", "--max-length", "16",
         *COMMON)
    return output


def produce_distill(work: Workspace, output: Path) -> Path:
    parallel = work.root / "parallel.tsv"
    parallel.write_text("".join(f"{text}\t{text.lower()}\n" for text in TEXTS * 4), encoding="utf-8")
    _run("distill", "--teacher", work.st, "--student", work["convert huggingface"], "--parallel", parallel,
         "--eval", parallel, "--model-dir", output, "--epochs", "1", "--batch-size", "4", "--max-length", "16",
         *COMMON)
    return output


BERT = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
            max_position_embeddings=64, type_vocab_size=2)


def produce_tf1_release(work: Workspace, output: Path) -> Path:
    """A Google BERT release written from a random `BertForPreTraining` (`tests/convert/tf1_releases.py`)."""
    import torch
    import transformers

    from convert.tf1_releases import bert_tensors, write_checkpoint, write_json, write_vocab

    torch.manual_seed(0)
    model = transformers.BertForPreTraining(transformers.BertConfig(**BERT, hidden_act="gelu_new")).eval()
    release = output / "uncased_L-2_H-32_A-4"   # Google's name, which says the casing
    release.mkdir(parents=True)
    write_checkpoint(release / "bert_model.ckpt", bert_tensors(model, BERT["num_hidden_layers"]))
    write_json(release / "bert_config.json", {**BERT, "hidden_act": "gelu"})
    write_vocab(release / "vocab.txt", BERT["vocab_size"])
    work.tf1_reference = model.bert
    return release


def produce_convert_tf1(work: Workspace, output: Path) -> Path:
    _run("convert", "tf1", work["tf1 release"], "-o", output / "model.keras")
    return output / "model.keras"


# name -> how the artifact is made (each from the outside source or another producer's artifact).
PRODUCERS: dict[str, Callable[[Workspace, Path], Path]] = {
    "vocab": produce_vocab,
    "vocab add": produce_vocab_add,
    "convert huggingface": produce_convert_st,
    "pretrain --init-from HF": produce_pretrain_init_from_st,
    "finetune regression": produce_finetune_regression,
    "finetune embedding": produce_finetune_embedding,
    "distill": produce_distill,
    "tf1 release": produce_tf1_release,
    "convert tf1": produce_convert_tf1,
    "pretrain from vocab": produce_pretrain_from_vocab,
    "pretrain --init-from run": produce_pretrain_init_from("pretrain from vocab"),
    "pretrain --init-from TF1": produce_pretrain_init_from("tf1 release"),
    "keras-hub preset": produce_keras_hub_preset,
    "pretrain --init-from keras-hub": produce_pretrain_init_from("keras-hub preset"),
    "convert keras-hub": produce_convert_keras_hub,
    "finetune classification": produce_finetune_classification,
}
# Producers standing in for what other tools write (no manifest).
OUTSIDE = {"tf1 release", "keras-hub preset"}


@pytest.fixture(scope="module")
def work(tmp_path_factory, assets) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("chains"), assets)


def consume_vocab_manifest(work: Workspace, path: Path) -> None:
    from tfbert.text import load_tokenizer

    artifact = artifacts.open(path)
    tokenizer = load_tokenizer(path)
    assert artifact.kind == "vocab"
    assert artifact.manifest["preprocessor"]["vocabulary_size"] == tokenizer.vocabulary_size()
    assert artifact.tokenizer.vocabulary() == tokenizer.vocabulary()


def consume_vocab_add_keeps_ids(work: Workspace, path: Path) -> None:
    old, new = artifacts.open(work["vocab"]).tokenizer, artifacts.open(path).tokenizer
    assert artifacts.open(path).manifest["provenance"]["source"] == str(work["vocab"])
    assert new.vocabulary()[:old.vocabulary_size()] == old.vocabulary()
    assert "snowstorm" in new.vocabulary()[old.vocabulary_size():]


def consume_open_sentence_transformers(work: Workspace, path: Path) -> None:
    artifact = artifacts.open(path)
    assert (artifact.kind, artifact.family, type(artifact.tokenizer).__name__) == ("keras", "bert",
                                                                                    "WordPieceTokenizer")
    assert artifacts.open(path.parent).kind == "converted-checkpoint"
    assert artifact.task["pooling"] == "mean" and artifact.task["normalize"] is True
    assert artifact.sequence_length == ST_LENGTH and artifact.preprocessor.packing_style == "bert"
    from tfbert.tasks import load_text_embedder

    np.testing.assert_allclose(load_text_embedder(path).embed(TEXTS), work.st_embeddings(), atol=2e-5)


def consume_to_huggingface(work: Workspace, path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    output = work.root / "back_to_hf"
    _run("convert", "to-huggingface", path, "-o", output)
    back = SentenceTransformer(str(output), device="cpu")
    assert back.max_seq_length == ST_LENGTH
    np.testing.assert_allclose(back.encode(TEXTS), work.st_embeddings(), atol=2e-5)


def _serve(work: Workspace, source: Path, name: str, **inputs) -> dict:
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    _run("export", source, "--name", name, "--output-dir", work.root / "saved")
    version = artifacts.resolve_saved_model(work.root / "saved" / name)
    assert version.name == "1" and artifacts.open(version.parent).kind == "export"
    signature = tf.saved_model.load(str(version)).signatures["serving_default"]
    return {key: value.numpy() for key, value in signature(**{k: tf.constant(v) for k, v in inputs.items()}).items()}


def consume_export_sentence_transformers(work: Workspace, path: Path) -> None:
    served = _serve(work, path, "st", text=TEXTS)
    np.testing.assert_allclose(np.linalg.norm(served["embedding"], axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(served["embedding"], work.st_embeddings(), atol=2e-5)
    manifest = artifacts.open(work.root / "saved" / "st").manifest
    assert (manifest["kind"], manifest["task"]["pooling"], manifest["task"]["normalize"]) == ("export", "mean", True)


def consume_export_tflite_and_predict(work: Workspace, path: Path) -> None:
    """sentence-transformers folder -> export --format tflite -> predict: its pooling, unit length and embeddings."""
    folder = work.root / "lite" / "st"
    _run("export", path, "--name", "st", "--output-dir", work.root / "lite", "--format", "tflite")
    artifact = artifacts.open(folder)
    assert (artifact.kind, artifact.task["pooling"], artifact.task["normalize"]) == ("tflite-export", "mean", True)
    assert artifact.sequence_length == ST_LENGTH
    predictions = work.root / "lite_embeddings.npy"
    _run("predict", folder, "--output", predictions, "--threads", "1", *TEXTS)
    np.testing.assert_allclose(np.load(predictions), work.st_embeddings(), atol=2e-5)
    from tfbert.tasks import load_text_embedder   # what evaluate, augment and distill --teacher read

    np.testing.assert_allclose(load_text_embedder(folder).embed(TEXTS), work.st_embeddings(), atol=2e-5)


def consume_export_pretraining_run(work: Workspace, path: Path) -> None:
    artifact = artifacts.open(path)
    assert (artifact.kind, artifact.family, artifact.task["heads"]) == ("pretraining-run", "bert", ["mlm"])
    _serve(work, path, "run", text=["the quick brown [MASK] jumps"])
    import tensorflow as tf

    loaded = tf.saved_model.load(str(work.root / "saved" / "run" / "1"))
    ids = loaded.signatures["tokenize"](text=tf.constant(TEXTS))["token_ids"].numpy()
    expected = artifacts.open(work.st).tokenizer.tokenize(TEXTS).to_list()
    assert [row[:len(want)].tolist() for row, want in zip(ids, expected)] == expected


def consume_augment_cross_encoder(work: Workspace, path: Path) -> None:
    from tfbert.tasks import load_cross_encoder

    artifact = artifacts.open(path)
    assert (artifact.kind, artifact.task["task"], artifact.preprocessor.packing_style) == ("model-dir", "regression",
                                                                                           "bert")
    sentences = work.root / "sentences.txt"
    sentences.write_text("\n".join(TEXTS * 2) + "\n", encoding="utf-8")
    output = work.root / "silver.tsv"
    _run("augment", "--cross-encoder", path, "--sentences", sentences, "--pairs", "random", "--count", "4",
         "--output", output, "--seed", "0")
    rows = [line.split("\t") for line in output.read_text(encoding="utf-8").splitlines()]
    first, second, written = [row[0] for row in rows], [row[1] for row in rows], [float(row[2]) for row in rows]
    scores = load_cross_encoder(path).score(first, second)
    np.testing.assert_allclose(written, np.clip(scores, *artifact.task["score_range"]), atol=1e-3)


def consume_evaluate_and_export_embedding(work: Workspace, path: Path) -> None:
    from tfbert.tasks import load_text_embedder

    artifact = artifacts.open(path)
    assert (artifact.kind, artifact.family, artifact.task["pooling"]) == ("model-dir", "bert", "mean")
    served = _serve(work, path, "finetuned", text=TEXTS)
    np.testing.assert_allclose(served["embedding"], load_text_embedder(path).embed(TEXTS), atol=2e-5)
    _run("evaluate", "sts", path, "--data", work.dev)


def consume_load_model_in_a_fresh_process(work: Workspace, path: Path) -> None:
    files = [work["convert huggingface"], work["finetune regression"] / "best.keras",
             work["finetune embedding"] / "best.keras", work["pretrain --init-from HF"] / "encoder" / "encoder.keras"]
    script = textwrap.dedent("""
        import json, sys
        import tfbert, keras
        found = []
        for path in sys.argv[1:]:
            model = keras.models.load_model(path)
            encoder = getattr(model, "encoder", model)
            found.append([type(model).__name__, encoder.architecture])
        print(json.dumps(found))
    """)
    result = subprocess.run([sys.executable, "-c", script, *map(str, files)], capture_output=True, text=True,
                            timeout=500)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [
        ["SentenceEmbedder", "bert"], ["SequenceRegressor", "bert"], ["SentenceEmbedder", "bert"],
        ["Encoder", "bert"]]


def consume_distilled_student(work: Workspace, path: Path) -> None:
    from tfbert.tasks import load_text_embedder

    artifact = artifacts.open(path)
    assert (artifact.kind, artifact.family, artifact.task["pooling"], artifact.task["normalize"]) == (
        "model-dir", "bert", "mean", True)
    np.testing.assert_allclose(np.linalg.norm(load_text_embedder(path).embed(TEXTS), axis=1), 1.0, atol=1e-5)


def consume_tf1_encoder(work: Workspace, path: Path) -> None:
    import torch

    from convert.tf1_releases import close_on_real_tokens, padded_batch

    artifact = artifacts.open(path)
    assert (artifact.family, artifact.preprocessor.packing_style, artifact.tokenizer.vocabulary_size()) == (
        "bert", "bert", BERT["vocab_size"])
    inputs, _ = padded_batch(BERT["vocab_size"])
    ours = artifact.load_encoder()(inputs)["sequence_output"]
    with torch.no_grad():
        theirs = work.tf1_reference(input_ids=torch.tensor(inputs["token_ids"]).long(),
                                    token_type_ids=torch.tensor(inputs["segment_ids"]).long(),
                                    attention_mask=torch.tensor(inputs["padding_mask"]).long()).last_hidden_state
    close_on_real_tokens(np.asarray(ours), theirs.numpy(), inputs["padding_mask"])


def consume_run_to_huggingface_automodel(work: Workspace, path: Path) -> None:
    """A run pretrained from scratch on a `tfbert vocab` vocabulary: its step and tokenizer recorded, and
    transformers' AutoTokenizer and AutoModel on the to-huggingface folder give its ids and outputs."""
    import torch
    import transformers

    artifact = artifacts.open(path)
    assert (artifact.kind, artifact.family, artifact.step) == ("pretraining-run", "bert", 2)
    assert artifact.manifest["provenance"]["step"] == 2 and artifact.manifest["provenance"]["source"] is None
    assert artifact.tokenizer.vocabulary() == artifacts.open(work["vocab"]).tokenizer.vocabulary()
    output = work.root / "run_to_hf"
    _run("convert", "to-huggingface", path, "-o", output)
    inputs = artifact.preprocessor_with(sequence_length=16).encode(TEXTS[:2], TEXTS[1:])
    real = inputs["padding_mask"].astype(bool)
    theirs = transformers.AutoTokenizer.from_pretrained(output)(TEXTS[:2], TEXTS[1:], padding="max_length",
                                                                max_length=16, truncation=True)
    np.testing.assert_array_equal(theirs["input_ids"], inputs["token_ids"])
    np.testing.assert_array_equal(theirs["token_type_ids"], inputs["segment_ids"])
    with torch.no_grad():
        model = transformers.AutoModel.from_pretrained(output).eval()
        hidden = model(input_ids=torch.tensor(inputs["token_ids"]).long(),
                       token_type_ids=torch.tensor(inputs["segment_ids"]).long(),
                       attention_mask=torch.tensor(inputs["padding_mask"]).long()).last_hidden_state.numpy()
    ours = np.asarray(artifact.load_encoder()(inputs)["sequence_output"])
    np.testing.assert_allclose(hidden[real], ours[real], atol=2e-4)


def consume_init_from_weights(work: Workspace, path: Path) -> None:
    """A run started from SOURCE records it (path, kind) and its own step, and holds SOURCE's encoder weights
    moved by two optimizer steps at most."""
    artifact = artifacts.open(path)
    provenance = artifact.manifest["provenance"]
    source = artifacts.open(provenance["source"])
    assert (provenance["source_kind"], provenance["step"], artifact.step) == (source.kind, 2, 2)
    assert artifact.tokenizer.vocabulary() == source.tokenizer.vocabulary()
    ours, theirs = artifact.load_encoder(), source.load_encoder()
    assert ours.config.hidden_size == theirs.config.hidden_size and len(ours.weights) == len(theirs.weights)
    for mine, start in zip(ours.weights, theirs.weights):
        assert np.max(np.abs(np.asarray(mine) - np.asarray(start))) < TWO_STEPS, mine.path


def consume_export_and_predict_labels(work: Workspace, path: Path) -> None:
    """Classifier -> export -> predict: the labels' names and order, and the model's probabilities, carried through."""
    import keras

    from tfbert.tasks import encode_texts

    artifact = artifacts.open(path)
    provenance = artifact.manifest["provenance"]
    assert (artifact.task["task"], artifact.task["labels"]) == ("classification", LABELS)
    assert (provenance["source"], provenance["source_kind"], provenance["source_step"]) == (
        str(work["pretrain from vocab"]), "pretraining-run", 2)
    logits = artifact.load_model()(encode_texts(artifact.preprocessor, TEXTS))["logits"]
    expected = np.asarray(keras.ops.softmax(logits))
    served = _serve(work, path, "classifier", text=TEXTS)
    np.testing.assert_allclose(served["probabilities"], expected, atol=1e-5)
    predictions = work.root / "predictions.jsonl"
    _run("predict", work.root / "saved" / "classifier", "--output", predictions, *TEXTS)
    records = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    assert [record["label"] for record in records] == [LABELS[row] for row in expected.argmax(axis=1)]
    assert [list(record["probabilities"]) for record in records] == [LABELS] * len(TEXTS)
    np.testing.assert_allclose([list(record["probabilities"].values()) for record in records], expected, atol=1e-5)


def consume_keras_hub_encoder(work: Workspace, path: Path) -> None:
    from convert.tf1_releases import close_on_real_tokens, padded_batch

    artifact = artifacts.open(path)
    assert (artifact.family, artifact.manifest["provenance"]["source_kind"]) == ("bert", "keras-hub")
    encoder = artifact.load_encoder()
    inputs, _ = padded_batch(encoder.config.vocab_size, seed=1)
    backbone = work.keras_hub_backbone
    theirs = backbone({name: inputs[name] for name in backbone.input}, training=False)
    close_on_real_tokens(encoder(inputs)["sequence_output"], theirs["sequence_output"], inputs["padding_mask"])


# (producer, consumer): each cell runs the consumer on what the producer wrote.
CELLS = [
    ("vocab", consume_vocab_manifest),
    ("vocab add", consume_vocab_add_keeps_ids),
    ("convert huggingface", consume_open_sentence_transformers),
    ("convert huggingface", consume_to_huggingface),
    (None, consume_export_sentence_transformers),
    (None, consume_export_tflite_and_predict),
    ("pretrain --init-from HF", consume_export_pretraining_run),
    ("finetune regression", consume_augment_cross_encoder),
    ("finetune embedding", consume_evaluate_and_export_embedding),
    ("finetune embedding", consume_load_model_in_a_fresh_process),
    ("distill", consume_distilled_student),
    ("convert tf1", consume_tf1_encoder),
    ("pretrain from vocab", consume_run_to_huggingface_automodel),
    ("pretrain --init-from run", consume_init_from_weights),
    ("pretrain --init-from TF1", consume_init_from_weights),
    ("pretrain --init-from keras-hub", consume_init_from_weights),
    ("finetune classification", consume_export_and_predict_labels),
    ("convert keras-hub", consume_keras_hub_encoder),
]


@pytest.mark.parametrize(("producer", "consumer"), CELLS,
                         ids=[f"{producer or 'sentence-transformers'} -> {consumer.__name__[8:]}"
                              for producer, consumer in CELLS])
def test_chain(work, producer, consumer):
    consumer(work, work[producer] if producer else work.st)


def test_every_producer_writes_a_manifest(work):
    for name in set(PRODUCERS) - OUTSIDE:
        path = work[name]
        folder = path.parent if path.suffix == ".keras" else path
        manifest = artifacts.read_manifest(folder)
        assert manifest is not None and manifest["provenance"]["tfbert_version"], name
