"""Sentence-BERT from sentence-pair files: features, the labels each loss trains on, training, the model dir.

`train_sentence_embedder` fine-tunes a `SiameseEmbedder` on `SentencePairs`, evaluates the Spearman
correlation of the cosine on STS pairs after every epoch, keeps the best epoch and writes a model
dir: `best.keras` (a `SentenceEmbedder` returning unit-length embeddings), `best.json`,
`tokenizer/` and `task.json` (`"task": "embedding"`, pooling, normalisation, max_length). `tfbert
export`, `tfbert evaluate sts` and `load_text_embedder` read that folder.

Example:
    >>> from tfbert.data.sentence_pairs import read_sentence_pairs
    >>> train, dev = read_sentence_pairs("KorSTS/sts-train.tsv"), read_sentence_pairs("KorSTS/sts-dev.tsv")
    >>> result = train_sentence_embedder("runs/albert", tokenizer, train, dev, "runs/korsts", loss="cosine")  # minutes  # doctest: +SKIP
    >>> result.best_scores["spearman_correlation"]  # doctest: +SKIP
    0.78
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from tfbert.artifacts.layout import BEST_MODEL_FILE, TOKENIZER_FOLDER
from tfbert.data.sentence_pairs import NLI_LABELS, SentencePairs, normalise_scores, score_range
from tfbert.finetuning.evaluation import similarity_evaluator
from tfbert.finetuning.features import encode_texts
from tfbert.finetuning.finetune import FinetuneResult, finetune
from tfbert.finetuning.model_dir import write_task
from tfbert.models.tasks import SentenceEmbedder, SiameseEmbedder

# What each loss trains on: the kinds of `SentencePairs` it accepts.
LOSS_PAIR_KINDS = {
    "cosine": ("score",),
    "contrastive": ("score",),
    "multiple-negatives": ("unlabelled", "triplet"),
    "softmax": ("nli",),
}
SIDES = ("first", "second", "third")


def encode_side(tokenizer, texts: Sequence[str], side: str, max_length: int) -> dict[str, np.ndarray]:
    """Encoder inputs of single texts named `{side}_token_ids`, ..., cut to the longest text (at most `max_length`).

    Example:
        >>> from tfbert.text import WordPieceTokenizer
        >>> tokenizer = WordPieceTokenizer("vocab.txt")
        >>> encode_side(tokenizer, ["a cat", "a cat sat down"], "first", 128)["first_token_ids"].shape
        (2, 6)
    """
    features = encode_texts(tokenizer, texts, max_length=max_length)
    width = int(features["padding_mask"].sum(axis=1).max(initial=1))
    return {f"{side}_{name}": values[:, :width] for name, values in features.items()}


def pair_features(tokenizer, pairs: SentencePairs, max_length: int = 128) -> dict[str, np.ndarray]:
    """`first_*`, `second_*` (and for triplets `third_*`) inputs of a `SiameseEmbedder`.

    Example:
        >>> from tfbert.data.sentence_pairs import SentencePairs
        >>> from tfbert.text import WordPieceTokenizer
        >>> pairs = SentencePairs(["a cat"], ["a dog"], labels=None, kind="unlabelled", format="pairs")
        >>> sorted(pair_features(WordPieceTokenizer("vocab.txt"), pairs, 64))[:3]
        ['first_padding_mask', 'first_segment_ids', 'first_token_ids']
    """
    features = {}
    for side, texts in zip(SIDES, (pairs.first, pairs.second, pairs.third)):
        if texts is not None:
            features.update(encode_side(tokenizer, texts, side, max_length))
    return features


def loss_labels(pairs: SentencePairs, loss: str, scale: tuple[float, float] | None = None) -> np.ndarray | None:
    """The labels `loss` trains on: scores mapped to 0..1 (`cosine`), 0/1 (`contrastive`), NLI class ids
    (`softmax`) or none (`multiple-negatives`). Raises `ValueError` when the pairs do not suit the loss.

    Example:
        >>> from tfbert.data.sentence_pairs import read_sentence_pairs
        >>> korsts_pairs = read_sentence_pairs("KorSTS/sts-train.tsv")
        >>> loss_labels(korsts_pairs, "cosine")[:3]          # 4.8, 3.8, 0.0 on the 0-5 scale
        array([0.96000004, 0.76      , 0.        ], dtype=float32)
    """
    if loss not in LOSS_PAIR_KINDS:
        raise ValueError(f"unknown embedding loss {loss!r}; expected one of {', '.join(LOSS_PAIR_KINDS)}")
    if pairs.kind not in LOSS_PAIR_KINDS[loss]:
        expected = {"cosine": "pairs with similarity scores (STS)", "contrastive": "pairs labelled 1 (similar) or 0",
                    "multiple-negatives": "pairs of similar texts without labels, or (anchor, positive, negative) "
                                          "triplets", "softmax": f"NLI pairs labelled {', '.join(NLI_LABELS)}"}[loss]
        raise ValueError(f"the {loss} loss trains on {expected}; the {pairs.format} data holds {pairs.kind} rows")
    if loss == "cosine":
        return normalise_scores(pairs.labels, scale or score_range(pairs))
    if loss == "contrastive":
        found = sorted(set(np.unique(pairs.labels).tolist()) - {0.0, 1.0})
        if found:
            raise ValueError(f"the contrastive loss needs labels 1 (similar) or 0 (not); found {found[:5]}")
        return pairs.labels.astype(np.float32)
    return None if loss == "multiple-negatives" else pairs.labels.astype(np.int32)


def save_embedding_model(model_dir: str | Path, embedder: SentenceEmbedder, tokenizer, task: dict) -> Path:
    """Writes `best.keras` (the embedder), `tokenizer/` and `task.json` (`task` plus what serving needs).

    Example:
        >>> from tfbert.models.tasks.embedding import SentenceEmbedder
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder, load_pretrained_tokenizer
        >>> encoder, tokenizer = load_pretrained_encoder("all-MiniLM-L6-v2/"), load_pretrained_tokenizer("all-MiniLM-L6-v2/")
        >>> save_embedding_model("runs/minilm", SentenceEmbedder(encoder, normalize=True), tokenizer,
        ...                      {"max_length": 128})
        PosixPath('runs/minilm/best.keras')
    """
    model_dir = Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    path = model_dir / BEST_MODEL_FILE
    embedder.save(path)
    tokenizer.save_assets(model_dir / TOKENIZER_FOLDER)
    write_task(model_dir, {"task": "embedding", "pooling": embedder.options["pooling"],
                           "normalize": embedder.options["normalize"], **task})
    return path


def _evaluation_scores(evaluation: SentencePairs) -> np.ndarray:
    if evaluation.kind != "score":
        raise ValueError(f"evaluation needs pairs with similarity scores (STS); the {evaluation.format} data holds "
                         f"{evaluation.kind} rows")
    return evaluation.labels


def train_sentence_embedder(
    pretrained,
    tokenizer,
    train: SentencePairs,
    evaluation: SentencePairs,
    model_dir: str | Path,
    *,
    loss: str = "cosine",
    pooling: str = "mean",
    max_length: int = 128,
    score_scale: tuple[float, float] | None = None,
    scale: float = 20.0,
    margin: float = 0.5,
    symmetric: bool = False,
    **finetune_options,
) -> FinetuneResult:
    """Sentence-BERT: fine-tune `pretrained` on `train` with `loss`, keep the epoch with the best Spearman
    correlation of the cosine on `evaluation`, and write the model dir (see the module notes).

    `tokenizer` is a `tfbert.text` tokenizer (saved to `tokenizer/`); `score_scale` is the scale of the
    training scores for the cosine loss (default: `score_range(train)`); `finetune_options` go to
    `finetune` (epochs, batch_size, learning_rate, strategy, seed, ...). The result's model is the
    best epoch's `SentenceEmbedder` with unit-length output.
    """
    scale_used = (score_scale or score_range(train)) if loss == "cosine" else None
    labels = loss_labels(train, loss, scale_used)
    evaluate = similarity_evaluator(pair_features(tokenizer, evaluation, max_length), _evaluation_scores(evaluation))

    def build(encoder):
        return SiameseEmbedder(encoder, pooling=pooling, loss=loss, scale=scale, margin=margin, symmetric=symmetric,
                               triplets=train.kind == "triplet", num_labels=len(NLI_LABELS))

    result = finetune(build, pretrained, pair_features(tokenizer, train, max_length), labels, evaluate,
                      monitor="spearman_correlation", model_dir=model_dir, **finetune_options)
    embedder = result.model.embedder(normalize=True)
    path = save_embedding_model(model_dir, embedder, tokenizer, {
        "loss": loss, "max_length": max_length, "score_range": list(scale_used) if scale_used else None,
        "metric": "spearman_correlation"})
    return FinetuneResult(embedder, result.best_epoch, result.best_scores, result.history, str(path))
