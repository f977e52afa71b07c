"""Fine-tuning tasks: task models, features, loaders, evaluators and the `finetune` driver.

Example:
    >>> from tfbert.tasks import SequenceClassifier, finetune, classification_evaluator
"""

from tfbert.tasks.evaluation import (
    classification_evaluator,
    multiple_choice_evaluator,
    regression_evaluator,
    similarity_evaluator,
    squad_evaluator,
    tagging_evaluator,
)
from tfbert.tasks.features import encode_choices, encode_texts
from tfbert.tasks.finetune import FinetuneResult, KeepBest, finetune
from tfbert.tasks.models import (
    MultipleChoice,
    SentenceEmbedder,
    SequenceClassifier,
    SequenceRegressor,
    SiameseEmbedder,
    SpanExtractor,
    TokenClassifier,
)
from tfbert.tasks.pretrained import load_pretrained_encoder, load_pretrained_tokenizer
from tfbert.tasks.question_answering import QAExample, QAFeatures, decode_answers, make_features
from tfbert.tasks.squad_examples import load_squad, read_squad_json, read_squad_jsonl
from tfbert.tasks.tagging import encode_tagged_words, word_predictions
from tfbert.tasks.text_examples import GLUE_TASKS, TextExamples, load_glue, read_text_examples
from tfbert.tasks.tokenization import HuggingFaceTokenizer, Pieces, TensorFlowTokenizer

__all__ = [
    "GLUE_TASKS",
    "FinetuneResult",
    "HuggingFaceTokenizer",
    "KeepBest",
    "MultipleChoice",
    "Pieces",
    "QAExample",
    "QAFeatures",
    "SentenceEmbedder",
    "SequenceClassifier",
    "SequenceRegressor",
    "SiameseEmbedder",
    "SpanExtractor",
    "TensorFlowTokenizer",
    "TextExamples",
    "TokenClassifier",
    "classification_evaluator",
    "decode_answers",
    "encode_choices",
    "encode_tagged_words",
    "encode_texts",
    "finetune",
    "load_glue",
    "load_pretrained_encoder",
    "load_pretrained_tokenizer",
    "load_squad",
    "make_features",
    "multiple_choice_evaluator",
    "read_squad_json",
    "read_squad_jsonl",
    "read_text_examples",
    "regression_evaluator",
    "similarity_evaluator",
    "squad_evaluator",
    "tagging_evaluator",
    "word_predictions",
]
