"""`pretrain` end to end on real text: vocabulary, pipeline, model, checkpoints, saved encoder."""

import keras
import numpy as np
import pytest

from tfbert import architectures
from tfbert.architectures import ExampleRecipe
from tfbert.config import PretrainingDefaults, load_config
from tfbert.models.encoder import Encoder
from tfbert.text import load_tokenizer
from tfbert.text.vocab_training import train_sentencepiece
from tfbert.training.pretraining import pretrain
from tfbert.training.pretraining_config import optimizer_settings
from tfbert.training.pretraining_inputs import document_pipeline, documents_from, example_pipeline, pretraining_examples

pytestmark = pytest.mark.end_to_end


@pytest.fixture(scope="module")
def botchan_corpus(assets, tmp_path_factory):
    """Botchan as documents of 25 sentences (a blank line between documents)."""
    lines = [line.strip() for line in assets("text/botchan.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    folder = tmp_path_factory.mktemp("botchan")
    corpus = folder / "botchan_documents.txt"
    corpus.write_text("\n\n".join("\n".join(lines[i:i + 25]) for i in range(0, len(lines), 25)) + "\n")
    tokenizer = train_sentencepiece(str(corpus), 800, folder / "spm", lowercase=True)
    return corpus, folder / "spm", tokenizer


def tiny_albert():
    config = load_config("albert_tiny")
    return config.replace(encoder=config.encoder.replace(hidden_size=64, num_heads=2, intermediate_size=128,
                                                         embedding_size=32, num_layers=2))


def test_albert_examples_fit_the_model(botchan_corpus):
    corpus, _, tokenizer = botchan_corpus
    dataset = pretraining_examples(tiny_albert(), tokenizer, documents_from(str(corpus)), batch_size=4,
                                   sequence_length=64, max_predictions=10, seed=0)
    inputs, labels = next(iter(dataset))
    assert set(inputs) == {"token_ids", "segment_ids", "padding_mask", "masked_positions"}
    assert set(labels) == {"masked_ids", "masked_weights", "sop_labels"}
    assert inputs["token_ids"].shape == (4, 64) and labels["masked_ids"].shape == (4, 10)


def test_pretrain_writes_checkpoints_encoder_tokenizer_and_config(botchan_corpus, tmp_path):
    corpus, tokenizer_dir, tokenizer = botchan_corpus
    run = tmp_path / "run"
    model = pretrain(tiny_albert(), tokenizer=tokenizer_dir, data=[str(corpus)], model_dir=str(run), steps=4,
                     global_batch_size=4, strategy="cpu", sequence_length=64, max_predictions=10,
                     checkpoint_every=2, seed=0, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 4
    assert model.config.encoder.vocab_size == tokenizer.vocabulary_size() == 800
    assert (run / "ckpt-4.index").exists()
    encoder = keras.models.load_model(run / "encoder" / "encoder.keras")
    assert isinstance(encoder, Encoder)
    np.testing.assert_array_equal(encoder.token_embedding.embeddings.numpy(),
                                  model.encoder.token_embedding.embeddings.numpy())
    assert load_config(run / "config.yaml") == model.config
    assert load_tokenizer(run / "tokenizer").vocabulary() == tokenizer.vocabulary()


def test_missing_corpus_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        documents_from([str(tmp_path / "nope.txt")])


def test_optimizer_settings_caller_then_config_recipe_then_paper():
    albert = load_config("albert_base")
    assert optimizer_settings(albert, 1000) == ("albert", None, None)
    assert optimizer_settings(albert, 1000, learning_rate=1e-3, warmup_steps=5) == ("albert", 1e-3, 5)
    tuned = albert.replace(pretraining=PretrainingDefaults(optimizer="bert", learning_rate=2e-3, warmup_fraction=0.1))
    assert optimizer_settings(tuned, 1000) == ("bert", 2e-3, 100)
    assert optimizer_settings(tuned, 1000, learning_rate=5e-4) == ("bert", 5e-4, 100)
    # Another optimizer than the config's gets that optimizer's own recipe, not the config's rate.
    assert optimizer_settings(tuned, 1000, optimizer_recipe="albert") == ("albert", None, None)
    # A section without an optimizer tunes the architecture's own.
    rate_only = albert.replace(pretraining=PretrainingDefaults(learning_rate=3e-3))
    assert optimizer_settings(rate_only, 1000) == ("albert", 3e-3, None)


def test_each_family_reads_its_data_with_the_pipeline_its_spec_names():
    pipelines = {name: example_pipeline(architectures.get(name)) for name in architectures.names()}
    assert {name for name, pipeline in pipelines.items() if pipeline is not document_pipeline} == {"xlm"}
    assert pipelines["xlm"].__module__ == "tfbert.families.xlm.data"
    with pytest.raises(ValueError, match='ExampleRecipe.pipeline \'nowhere\' is not "module:function"'):
        ExampleRecipe("full_sentences", pipeline="nowhere")
    with pytest.raises(ValueError, match="xlm examples are not made from documents: pretrain reads its data with "
                                         "tfbert.families.xlm.data:multilingual_pipeline"):
        pretraining_examples(load_config("xlm_tiny"), None, None, batch_size=2)


def test_documents_from_a_dataset_and_from_tfrecord_files(tmp_path):
    import tensorflow as tf

    documents = tf.data.Dataset.from_tensor_slices(tf.constant([["a b."], ["c d."]]))
    assert documents_from(documents) is documents
    first = next(iter(documents_from(["corpus:web"]))).numpy()
    assert first[0].decode().startswith("In the beginning")
    path = str(tmp_path / "corpus.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for document in ("First line.\nSecond line.", "Another document."):
            writer.write(document.encode("utf-8"))
    read = [[sentence.decode() for sentence in document.numpy()] for document in documents_from(str(tmp_path / "*.tfrecord"))]
    assert read == [["First line.", "Second line."], ["Another document."]]


def test_a_corpus_that_yields_no_tokens_is_refused_naming_it_and_nothing_is_trained(botchan_corpus, tmp_path):
    """Lines of control characters tokenize to nothing: no example, so no step, no checkpoint, no encoder."""
    from tfbert.training.no_data import NoTrainingData

    _, tokenizer_dir, _ = botchan_corpus
    corpus = tmp_path / "controls.txt"
    corpus.write_text("\n\n".join("\x01\x02\n\x03\x04" for _ in range(50)) + "\n")
    run = tmp_path / "run"
    with pytest.raises(NoTrainingData) as error:
        pretrain(tiny_albert(), tokenizer=tokenizer_dir, data=[str(corpus)], model_dir=str(run), steps=4,
                 global_batch_size=4, strategy="cpu", sequence_length=64, max_predictions=10, checkpoint_every=2,
                 seed=0, verbose=0)
    message = str(error.value)
    assert message.startswith(f"{corpus} gave no training example: its lines tokenize to nothing")
    assert "\n" not in message
    assert not list(run.glob("ckpt-*")) and not (run / "encoder").exists()


@pytest.fixture
def restore_policy():
    previous = keras.mixed_precision.global_policy()
    yield
    keras.mixed_precision.set_global_policy(previous)


def test_the_precision_auto_picks_is_recorded_in_the_run_and_kept_on_resume(botchan_corpus, tmp_path, monkeypatch,
                                                                          restore_policy):
    """The manifest records the choice and why; a resumed run keeps it though this machine would choose otherwise."""
    import json

    corpus, tokenizer_dir, _ = botchan_corpus
    run = tmp_path / "run"

    def train(steps: int, precision: str = "auto"):
        return pretrain(tiny_albert(), tokenizer=tokenizer_dir, data=[str(corpus)], model_dir=str(run), steps=steps,
                        global_batch_size=4, strategy="cpu", sequence_length=64, max_predictions=10,
                        checkpoint_every=2, seed=0, verbose=0, precision=precision)

    def recorded() -> dict:
        return json.loads((run / "tfbert.json").read_text())["provenance"]["precision"]

    monkeypatch.setenv("TFBERT_CPU_BF16", "amx_bf16,amx_tile")
    train(2)
    assert recorded()["policy"] == "float32"   # hidden size 64: too narrow for bf16 even with AMX
    assert recorded()["reason"].startswith("--precision auto at the run's start on ")
    manifest = json.loads((run / "tfbert.json").read_text())
    manifest["provenance"]["precision"] = {"policy": "mixed_bfloat16", "reason": "TPU"}   # as begun on a TPU
    (run / "tfbert.json").write_text(json.dumps(manifest))
    model = train(4)
    assert model.dtype_policy.name == "mixed_bfloat16" and int(model.optimizer.iterations.numpy()) == 4
    assert recorded() == {"policy": "mixed_bfloat16", "reason": "kept from the run's manifest: TPU"}
    model = train(6, precision="fp32")
    assert model.dtype_policy.name == "float32"
    assert recorded() == {"policy": "float32", "reason": "requested; the run trained in mixed_bfloat16 before"}
