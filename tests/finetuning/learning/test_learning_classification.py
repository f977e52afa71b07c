"""Classification learns through `finetune` on real text: Pang & Lee polarity on the whole all-MiniLM-L6-v2
(marked slow), beating the majority class on held-out sentences."""

import numpy as np
import pytest

from tfbert.finetuning.evaluation import classification_evaluator
from tfbert.finetuning.features import encode_texts
from tfbert.finetuning.finetune import finetune
from tfbert.models.tasks import SequenceClassifier

pytestmark = pytest.mark.slow


@pytest.mark.slow
def test_classification_on_pang_lee_beats_the_majority_class(assets, tokenizer, tmp_path, monkeypatch):
    monkeypatch.setenv("TFBERT_CPU_BF16", "amx_bf16,amx_tile")   # a CPU with AMX
    lines = assets("labelled/pang_lee_polarity.cor").read_text(encoding="cp1252", errors="replace").splitlines()
    labels = np.array([line.startswith("__label__pos") for line in lines], np.int32)
    texts = [line.split(" ", 1)[1].strip() for line in lines]
    order = np.random.default_rng(0).permutation(len(texts))
    train, held_out = order[:150], order[150:]
    features = encode_texts(tokenizer, texts, max_length=32)
    pick = lambda rows: {name: value[rows] for name, value in features.items()}
    result = finetune(
        lambda encoder: SequenceClassifier(encoder, num_classes=2, pooling="mean"),
        assets("minilm/config.json").parent,
        pick(train), labels[train],
        classification_evaluator(pick(held_out), labels[held_out]),
        monitor="accuracy", model_dir=tmp_path, epochs=4, batch_size=16, learning_rate=1e-4, seed=0,
    )
    assert result.model.dtype_policy.name == "float32", "MiniLM's matmuls (384 wide) are too narrow to gain from bf16"
    majority = max(labels[held_out].mean(), 1 - labels[held_out].mean())
    print(f"Pang & Lee held-out accuracy {result.best_scores['accuracy']:.2f} vs majority {majority:.2f}")
    assert result.best_scores["accuracy"] >= majority + 0.12
    assert (tmp_path / "best.keras").is_file() and (tmp_path / "best.json").is_file()
    # the returned model carries the best epoch's weights
    assert classification_evaluator(pick(held_out), labels[held_out])(result.model) == result.best_scores
