"""Multilingual knowledge distillation (Reimers & Gurevych 2020, https://arxiv.org/abs/2004.09813).

A teacher embeds the source sentences once; the student (`EmbeddingDistiller`) learns, with mean
squared error, to give both a source sentence and its translation the teacher's embedding of the
source. Evaluation on held-out pairs reports the MSE between the student's embedding of each
translation and the teacher's of its source, and top-1 translation retrieval by cosine, both ways.

Before training, `vocabulary_coverage` checks that the student's tokenizer can read both languages
(the student embeds both sides): a vocabulary made for another language maps words to the unknown
piece or splits them into single characters, and distillation then makes the student worse.

Example:
    >>> from tfbert.inference.text_models import load_text_embedder
    >>> sources, targets = read_parallel(["kjv-rv.tsv"])
    >>> teacher = load_text_embedder("all-MiniLM-L6-v2/")
    >>> result = distill(teacher, "runs/student", tokenizer, sources, targets, "runs/distilled")  # minutes  # doctest: +SKIP
    >>> result.best_scores["target_to_source_accuracy"]  # doctest: +SKIP
    0.91
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from tfbert.data.local_files import DataFileError
from tfbert.finetuning.embeddings import encode_side, save_embedding_model
from tfbert.finetuning.evaluation import Evaluator, SidesEmbedder, side_features
from tfbert.finetuning.finetune import FinetuneResult, finetune
from tfbert.metrics import translation_accuracy, unit_rows
from tfbert.models.tasks import EmbeddingDistiller
from tfbert.models.tasks.embedding import DISTILLATION_SIDES

if TYPE_CHECKING:   # the teacher's type only: tfbert.inference sits above fine-tuning
    from tfbert.inference.text_models import TextEmbedder

# AdamW's epsilon for distillation, sentence-transformers' (PyTorch's) rather than BERT's 1e-6: the
# gradients of an MSE between unit vectors are small enough for 1e-6 to damp every step.
DISTILLATION_EPSILON = 1e-8
# Share of the target-language words the student's tokenizer may lose before `distill` warns.
COVERAGE_LIMIT = 0.05
COVERAGE_SAMPLE = 2000


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such parallel text file")
    return path.read_text(encoding="utf-8-sig").splitlines()


def _pair_from_tsv(path: Path, number: int, line: str) -> tuple[str, str]:
    fields = line.split("\t")
    if len(fields) != 2 or not all(field.strip() for field in fields):
        raise DataFileError(path, f"expected 'source<TAB>target' with two non-empty sides, got {len(fields)} "
                                  f"field(s): {line[:60]!r}", number)
    return fields[0].strip(), fields[1].strip()


def read_parallel(paths: Sequence[str | Path]) -> tuple[list[str], list[str]]:
    """Source and target sentences from one `source<TAB>target` file or two aligned files (line i translates
    line i). Blank lines of a TSV file are skipped; a bad line raises `DataFileError` with its number.

    Example:
        >>> read_parallel(["kjv.en", "rv.es"])[1][0]
        'EN el principio crió Dios los cielos y la tierra.'
    """
    if len(paths) == 1:
        path = Path(paths[0])
        pairs = [_pair_from_tsv(path, number, line) for number, line in enumerate(_lines(path), start=1) if line.strip()]
        return [source for source, _ in pairs], [target for _, target in pairs]
    if len(paths) != 2:
        raise ValueError(f"give one source<TAB>target file or two aligned files, not {len(paths)}")
    (first, second), (sources, targets) = map(Path, paths), map(_lines, map(Path, paths))
    if len(sources) != len(targets):
        raise ValueError(f"parallel files are not aligned: {first} has {len(sources)} lines, {second} has "
                         f"{len(targets)}")
    for number, (source, target) in enumerate(zip(sources, targets), start=1):
        if bool(source.strip()) != bool(target.strip()):
            empty = first if not source.strip() else second
            raise DataFileError(empty, "empty line where the other file has a sentence", number)
    kept = [(s.strip(), t.strip()) for s, t in zip(sources, targets) if s.strip()]
    return [source for source, _ in kept], [target for _, target in kept]


@dataclasses.dataclass(frozen=True)
class VocabularyCoverage:
    """How the student's tokenizer reads target-language words: how many hold an unknown piece, and how
    many of at least two characters come out as one piece per character.

    Example:
        >>> VocabularyCoverage(words=100, unknown=80, single_characters=0).lost
        0.8
    """

    words: int
    unknown: int
    single_characters: int

    @property
    def lost(self) -> float:
        """The share of words that hold an unknown piece or are split into single characters."""
        return (self.unknown + self.single_characters) / max(self.words, 1)

    def warning(self, side: str = "target") -> str | None:
        """A message saying what is wrong and how to fix it, when more than `COVERAGE_LIMIT` of the words of the
        `side` ("source" or "target") language are lost."""
        if self.lost <= COVERAGE_LIMIT:
            return None
        return (f"the student's tokenizer maps {self.unknown / max(self.words, 1):.0%} of the {side}-language words "
                f"to unknown pieces and splits {self.single_characters / max(self.words, 1):.0%} into single "
                "characters: its vocabulary does not cover that language, and distillation would make the student "
                "worse. Add the language's pieces (tfbert vocab add) or start from a student with a multilingual "
                "vocabulary (e.g. XLM-R, multilingual BERT).")


WORD = re.compile(r"\w\w+")


def vocabulary_coverage(tokenizer, texts: Sequence[str], sample: int = COVERAGE_SAMPLE) -> VocabularyCoverage:
    """`VocabularyCoverage` of the words (2+ word characters) of the first `sample` texts.

    Example:
        >>> from tfbert.text import WordPieceTokenizer
        >>> english_wordpiece = WordPieceTokenizer("vocab.txt")
        >>> vocabulary_coverage(english_wordpiece, ["태초에 하나님이 천지를 창조하시니라"]).warning() is None
        False
    """
    words = list(dict.fromkeys(word for text in texts[:sample] for word in WORD.findall(text)))
    if not words:
        return VocabularyCoverage(0, 0, 0)
    pieces = tokenizer.tokenize(words)
    pieces = pieces.merge_dims(-2, -1) if pieces.shape.rank > 2 else pieces
    unknown_id = tokenizer.unk_id
    unknown = single = 0
    for word, row in zip(words, pieces.to_list()):
        if unknown_id is not None and unknown_id in row:
            unknown += 1
        elif len(row) >= len(word):
            single += 1
    return VocabularyCoverage(len(words), unknown, single)


def distillation_evaluator(features: dict[str, np.ndarray], teacher: np.ndarray, batch_size: int = 64) -> Evaluator:
    """MSE of the student's unit-length target embeddings against the teacher's (unit-length) source embeddings,
    and translation
    retrieval accuracy of the student both ways (`source_to_target_accuracy`, `target_to_source_accuracy`,
    their mean `translation_accuracy`).

    Example:
        >>> evaluate = distillation_evaluator(features, unit_rows(teacher.embed(sources)))   # inside distill(), each epoch  # doctest: +SKIP
        >>> sorted(evaluate(model))  # doctest: +SKIP
        ['mse', 'source_to_target_accuracy', 'target_to_source_accuracy', 'translation_accuracy']
    """
    embed = SidesEmbedder([side_features(features, side) for side in DISTILLATION_SIDES], batch_size)

    def evaluate(model) -> dict[str, float]:
        source, target = (unit_rows(vectors) for vectors in embed(model))
        forward, backward = translation_accuracy(source, target)
        return {"mse": float(np.mean(np.square(target - teacher))), "source_to_target_accuracy": forward,
                "target_to_source_accuracy": backward, "translation_accuracy": (forward + backward) / 2}
    return evaluate


def _features(tokenizer, sources: Sequence[str], targets: Sequence[str], max_length: int) -> dict[str, np.ndarray]:
    return {**encode_side(tokenizer, sources, "source", max_length), **encode_side(tokenizer, targets, "target", max_length)}


def distill(
    teacher: TextEmbedder,
    student,
    tokenizer,
    sources: Sequence[str],
    targets: Sequence[str],
    model_dir: str | Path,
    *,
    eval_sources: Sequence[str],
    eval_targets: Sequence[str],
    pooling: str = "mean",
    max_length: int = 128,
    **finetune_options,
) -> FinetuneResult:
    """Distil `teacher` into `student` on parallel sentences; keep the epoch with the best translation accuracy on
    the evaluation pairs and write an embedding model dir (as `train_sentence_embedder` does).

    `student` is what `finetune` takes as `pretrained` (an `Encoder`, a `.keras` file, an encoder or Hugging
    Face folder); `tokenizer` is its `tfbert.text` tokenizer; `finetune_options` go to `finetune`.
    """
    teacher_train = unit_rows(teacher.embed(list(sources)))
    teacher_eval = unit_rows(teacher.embed(list(eval_sources)))
    evaluate = distillation_evaluator(_features(tokenizer, eval_sources, eval_targets, max_length), teacher_eval)
    def build(encoder):
        if encoder.config.hidden_size != teacher_train.shape[1]:
            raise ValueError(f"the student's embeddings have {encoder.config.hidden_size} dimensions and the "
                             f"teacher's {teacher_train.shape[1]}; distil into a student of the teacher's hidden size")
        return EmbeddingDistiller(encoder, pooling=pooling)

    result = finetune(build, student,
                      _features(tokenizer, sources, targets, max_length), teacher_train, evaluate,
                      monitor="translation_accuracy", model_dir=model_dir,
                      **{"epsilon": DISTILLATION_EPSILON, **finetune_options})
    embedder = result.model.embedder(normalize=True)
    path = save_embedding_model(model_dir, embedder, tokenizer, {
        "loss": "distillation", "max_length": max_length, "metric": "translation_accuracy"})
    return FinetuneResult(embedder, result.best_epoch, result.best_scores, result.history, str(path))
