"""Fine-tuning in one import: the task models, example readers, features, evaluators, the `finetune` driver and
the text embedders and cross-encoders, re-exported from where they live.

| name | lives in |
|---|---|
| `SequenceClassifier`, `SpanExtractor`, `SentenceEmbedder`, ... | `tfbert.models.tasks` (Keras models, `keras.ops` only) |
| `read_text_examples`, `load_glue`, `load_squad`, `QAExample`, `read_sentence_pairs`, ... | `tfbert.data` (example readers) |
| `finetune`, `encode_texts`, `make_features`, `*_evaluator`, `load_pretrained_encoder`, ... | `tfbert.finetuning` |
| `load_text_embedder`, `load_cross_encoder` | `tfbert.inference` |

Every name below is imported when first used (most import TensorFlow), so `import tfbert.tasks`
is instant.

Example:
    >>> from tfbert.tasks import SequenceClassifier, finetune, classification_evaluator
    >>> SequenceClassifier.__module__
    'tfbert.models.tasks.classification'
"""

from tfbert._lazy import by_module, lazy_exports

_EXPORTS = by_module({
    "tfbert.data.sentence_pairs": ["NLI_LABELS", "SentencePairs", "combine_pairs", "read_sentence_pairs"],
    "tfbert.data.squad_examples": ["QAExample", "load_squad", "read_squad_json", "read_squad_jsonl"],
    "tfbert.data.text_examples": ["GLUE_TASKS", "TextExamples", "load_glue", "read_text_examples"],
    "tfbert.finetuning.embeddings": ["pair_features", "train_sentence_embedder"],
    "tfbert.finetuning.evaluation": ["classification_evaluator", "multiple_choice_evaluator", "regression_evaluator",
                                     "similarity_evaluator", "squad_evaluator", "tagging_evaluator"],
    "tfbert.finetuning.features": ["encode_choices", "encode_texts"],
    "tfbert.finetuning.finetune": ["FinetuneResult", "KeepBest", "finetune"],
    "tfbert.finetuning.pretrained": ["load_pretrained_encoder", "load_pretrained_preprocessor",
                                     "load_pretrained_tokenizer"],
    "tfbert.finetuning.question_answering": ["QAFeatures", "decode_answers", "make_features"],
    "tfbert.finetuning.tagging": ["encode_tagged_words", "word_predictions"],
    "tfbert.finetuning.tokenization": ["HuggingFaceTokenizer", "Pieces", "TensorFlowTokenizer"],
    "tfbert.inference.text_models": ["load_cross_encoder", "load_text_embedder"],
    "tfbert.models.tasks": ["EmbeddingDistiller", "MultipleChoice", "SentenceEmbedder", "SequenceClassifier",
                            "SequenceRegressor", "SiameseEmbedder", "SpanExtractor", "TokenClassifier"],
})
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
