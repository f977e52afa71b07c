"""Sentence-embedding losses and pooling match sentence-transformers' on the same embeddings."""

import types

import numpy as np
import pytest
import torch
from sentence_transformers.sentence_transformer import losses as st_losses
from sentence_transformers.sentence_transformer.losses import softmax as st_softmax

from tfbert.config import EncoderConfig
from tfbert.models.tasks import SiameseEmbedder
from tfbert.models.tasks.layers import Pooling

CONFIG = EncoderConfig(vocab_size=100, hidden_size=32, num_layers=1, num_heads=4, intermediate_size=48,
                       max_positions=32)
SIDES = ("first", "second", "third")


def inputs(sides, rows=6, length=10, seed=0):
    rng = np.random.default_rng(seed)
    features = {}
    for index, side in enumerate(sides):
        mask = (np.arange(length)[None, :] < rng.integers(3, length + 1, rows)[:, None]).astype("int32")
        features.update({f"{side}_token_ids": (rng.integers(1, 100, (rows, length)) * mask).astype("int32"),
                         f"{side}_segment_ids": np.zeros((rows, length), "int32"), f"{side}_padding_mask": mask})
    return features


def outputs_and_loss(model, features, labels):
    y_pred = model(features)
    loss = model.compute_loss(x=features, y=labels, y_pred=y_pred)
    return {name: torch.tensor(np.asarray(value)) for name, value in y_pred.items()}, float(loss)


def fake_model():
    return types.SimpleNamespace(device="cpu")


@pytest.mark.parametrize("loss, options, reference", [
    ("cosine", {}, lambda: st_losses.CosineSimilarityLoss(fake_model())),
    ("contrastive", {}, lambda: st_losses.ContrastiveLoss(fake_model())),
    ("contrastive", {"margin": 0.9}, lambda: st_losses.ContrastiveLoss(fake_model(), margin=0.9)),
    ("multiple-negatives", {}, lambda: st_losses.MultipleNegativesRankingLoss(fake_model())),
    ("multiple-negatives", {"symmetric": True}, lambda: st_losses.MultipleNegativesRankingLoss(
        fake_model(), directions=("query_to_doc", "doc_to_query"), partition_mode="per_direction")),
    ("multiple-negatives", {"triplets": True, "scale": 10.0},
     lambda: st_losses.MultipleNegativesRankingLoss(fake_model(), scale=10.0)),
])
def test_pair_losses_equal_sentence_transformers(loss, options, reference):
    model = SiameseEmbedder(CONFIG, loss=loss, **options)
    sides = SIDES if options.get("triplets") else SIDES[:2]
    rng = np.random.default_rng(1)
    labels = {"cosine": rng.random(6).astype("float32"), "contrastive": np.array([1, 0, 1, 1, 0, 0], "float32")}.get(loss)
    ours, value = outputs_and_loss(model, inputs(sides), labels)
    embeddings = [ours[f"{side}_embedding"] for side in sides]
    expected = reference().compute_loss_from_embeddings(embeddings, torch.tensor(labels if labels is not None else []))
    assert value == pytest.approx(float(expected), rel=1e-5, abs=1e-6)


def test_softmax_loss_equals_sentence_transformers_with_the_same_classifier(monkeypatch):
    model = SiameseEmbedder(CONFIG, loss="softmax")
    labels = np.array([0, 1, 2, 2, 1, 0], "int32")
    ours, value = outputs_and_loss(model, inputs(SIDES[:2]), labels)
    reference = st_losses.SoftmaxLoss(fake_model(), embedding_dimension=32, num_labels=3)
    kernel, bias = model.get_layer("classifier").get_weights()
    with torch.no_grad():
        reference.classifier.weight.copy_(torch.tensor(kernel.T))
        reference.classifier.bias.copy_(torch.tensor(bias))
    monkeypatch.setattr(st_softmax, "embed_columns", lambda _, __: [ours["first_embedding"], ours["second_embedding"]])
    expected = reference([{}, {}], torch.tensor(labels, dtype=torch.long))
    assert value == pytest.approx(float(expected.detach()), rel=1e-5)


def test_max_pooling_ignores_padding_as_sentence_transformers_does():
    from sentence_transformers.models import Pooling as STPooling

    rng = np.random.default_rng(2)
    sequence = rng.normal(size=(3, 5, 4)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 0, 0, 0, 0]], "int32")
    sequence[mask == 0] = 100.0  # padding must never win the maximum
    reference = STPooling(4, pooling_mode="max")({"token_embeddings": torch.tensor(sequence),
                                                   "attention_mask": torch.tensor(mask)})
    np.testing.assert_allclose(np.asarray(Pooling("max")(sequence, mask)), reference["sentence_embedding"].numpy(),
                               rtol=1e-6)


def test_each_loss_takes_the_labels_of_its_kind_of_pairs():
    from tfbert.finetuning.embeddings import loss_labels
    from tfbert.data.sentence_pairs import SentencePairs

    scored = SentencePairs(["a", "b"], ["c", "d"], np.array([5.0, 1.0], "float32"), "score", "korsts",
                           score_range=(0.0, 5.0))
    binary = SentencePairs(["a", "b"], ["c", "d"], np.array([1.0, 0.0], "float32"), "score", "pairs")
    nli = SentencePairs(["a"], ["b"], np.array([2], "int32"), "nli", "kornli")
    triplets = SentencePairs(["a"], ["b"], None, "triplet", "pairs", third=["c"])
    np.testing.assert_allclose(loss_labels(scored, "cosine"), [1.0, 0.2])
    np.testing.assert_allclose(loss_labels(scored, "cosine", (1.0, 5.0)), [1.0, 0.0])
    assert loss_labels(binary, "contrastive").tolist() == [1.0, 0.0]
    assert loss_labels(nli, "softmax").tolist() == [2] and loss_labels(triplets, "multiple-negatives") is None
    with pytest.raises(ValueError, match="contrastive loss needs labels 1 \\(similar\\) or 0 \\(not\\); found \\[5.0\\]"):
        loss_labels(scored, "contrastive")
    with pytest.raises(ValueError, match="multiple-negatives loss trains on pairs of similar texts .* holds nli rows"):
        loss_labels(nli, "multiple-negatives")


def test_distillation_loss_equals_sentence_transformers_mse_loss():
    from tfbert.models.tasks import EmbeddingDistiller

    model = EmbeddingDistiller(CONFIG)
    teacher = np.random.default_rng(3).normal(size=(6, 32)).astype("float32")
    teacher /= np.linalg.norm(teacher, axis=1, keepdims=True)
    ours, value = outputs_and_loss(model, inputs(("source", "target")), teacher)
    np.testing.assert_allclose(np.linalg.norm(ours["source_embedding"].numpy(), axis=1), 1.0, rtol=1e-5)
    reference = st_losses.MSELoss(fake_model()).compute_loss_from_embeddings(
        [ours["source_embedding"], ours["target_embedding"]], [torch.tensor(teacher)] * 2)
    assert value == pytest.approx(float(reference), rel=1e-5)
