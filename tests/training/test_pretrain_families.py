"""`pretrain` recipes for ELECTRA, SpanBERT, XLM-R and XLM through the `train` driver, on real text."""

import itertools

import keras
import numpy as np
import pytest

import tfbert.corpus
from .tiny_recipes import tiny_electra, tiny_spanbert, tiny_xlm, tiny_xlmr
from tfbert.models.encoder import Encoder
from tfbert.text.vocab_training import train_sentencepiece, train_wordpiece
from tfbert.training.pretraining import pretrain
from tfbert.training.pretraining_inputs import documents_from, pretraining_examples

pytestmark = pytest.mark.end_to_end

SMALL = dict(hidden=32, layers=1, heads=2)


@pytest.fixture(scope="module")
def web_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("web")
    lines = list(itertools.islice(tfbert.corpus.lines(), 1500))
    corpus = folder / "web.txt"
    corpus.write_text("\n\n".join("\n".join(lines[i:i + 30]) for i in range(0, len(lines), 30)) + "\n")
    train_wordpiece(str(corpus), 600, folder / "wordpiece")
    train_sentencepiece(str(corpus), 600, folder / "spm")
    return corpus, folder


def run(config, tokenizer_dir, data, tmp_path, **kwargs):
    run_dir = tmp_path / "run"
    model = pretrain(config, tokenizer=tokenizer_dir, data=data, model_dir=str(run_dir), steps=2, global_batch_size=2,
                     strategy="cpu", sequence_length=32, max_predictions=5, seed=0, verbose=0, **kwargs)
    assert int(model.optimizer.iterations.numpy()) == 2
    encoder = keras.models.load_model(run_dir / "encoder" / "encoder.keras")
    assert isinstance(encoder, Encoder)
    return model, encoder


def test_electra_pretrains_and_exports_the_discriminator(web_corpus, tmp_path):
    corpus, folder = web_corpus
    model, encoder = run(tiny_electra(embedding=32, **SMALL), folder / "wordpiece", str(corpus), tmp_path)
    np.testing.assert_array_equal(encoder.token_embedding.embeddings.numpy(),
                                  model.discriminator.token_embedding.embeddings.numpy())
    assert {"rtd_loss", "rtd_precision", "rtd_recall", "mlm_loss"} <= set(model.get_metrics_result())


def test_electra_examples_have_one_or_two_segments_in_order(web_corpus):
    corpus, folder = web_corpus
    from tfbert.text import load_tokenizer

    tokenizer = load_tokenizer(folder / "wordpiece")
    dataset = pretraining_examples(tiny_electra(embedding=32, **SMALL), tokenizer, documents_from(str(corpus)),
                                   batch_size=8, sequence_length=48, max_predictions=6, seed=0)
    singles = pairs = 0
    for inputs, labels in dataset.take(10):
        assert set(labels) == {"masked_ids", "masked_weights"}
        for tokens, segments, mask in zip(inputs["token_ids"].numpy(), inputs["segment_ids"].numpy(),
                                          inputs["padding_mask"].numpy()):
            real = tokens[mask > 0]
            separators = int(np.sum(real == tokenizer.sep_id))
            assert separators in (1, 2) and real[-1] == tokenizer.sep_id and real[0] == tokenizer.cls_id
            assert (separators == 2) == bool(segments.max() == 1)
            singles, pairs = singles + (separators == 1), pairs + (separators == 2)
    assert pairs > singles > 0


def test_electra_examples_are_shuffled_unless_the_buffer_is_zero(web_corpus):
    """Batches of consecutive chunks of one chapter train a small model markedly slower."""
    corpus, folder = web_corpus
    from tfbert.text import load_tokenizer

    tokenizer = load_tokenizer(folder / "wordpiece")

    def first_tokens(seed=0, **kwargs):
        dataset = pretraining_examples(tiny_electra(embedding=32, **SMALL), tokenizer, documents_from(str(corpus)),
                                       batch_size=4, sequence_length=48, max_predictions=6, seed=seed, **kwargs)
        return [tuple(row) for inputs, _ in dataset.take(10) for row in inputs["token_ids"].numpy()]

    shuffled = first_tokens()
    assert first_tokens(shuffle_buffer=0) != shuffled
    assert first_tokens() == shuffled and first_tokens(seed=1) != shuffled


def test_spanbert_pretrains_with_span_inputs(web_corpus, tmp_path):
    corpus, folder = web_corpus
    model, _ = run(tiny_spanbert(**SMALL), folder / "wordpiece", "corpus:web", tmp_path)
    assert {"mlm_loss", "sbo_loss"} <= set(model.get_metrics_result())


def test_xlmr_pretrains_full_sentences(web_corpus, tmp_path):
    corpus, folder = web_corpus
    model, encoder = run(tiny_xlmr(**SMALL), folder / "spm", str(corpus), tmp_path)
    assert model.config.architecture == "xlmr" and encoder.config.vocab_size == 600


def test_xlm_pretrains_tlm_on_aligned_files(web_corpus, tmp_path):
    corpus, folder = web_corpus
    lines = [line for line in corpus.read_text().splitlines() if line][:200]
    (tmp_path / "a.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(reversed(lines)) + "\n")
    model, _ = run(tiny_xlm(**SMALL), folder / "spm", f"tlm:{tmp_path / 'a.txt'},{tmp_path / 'b.txt'}", tmp_path)
    assert model.objective == "mlm" and "mlm_loss" in model.get_metrics_result()
