"""Fine-tuning tasks: task models, features, loaders, evaluators and the `finetune` driver.

Every name below is imported when first used (most import TensorFlow), so `import tfbert.tasks`
is instant.

Example:
    >>> from tfbert.tasks import SequenceClassifier, finetune, classification_evaluator
"""

from tfbert._lazy import by_module, lazy_exports

_EXPORTS = by_module({
    "tfbert.tasks.embeddings": ["pair_features", "train_sentence_embedder"],
    "tfbert.tasks.evaluation": ["classification_evaluator", "multiple_choice_evaluator", "regression_evaluator",
                                "similarity_evaluator", "squad_evaluator", "tagging_evaluator"],
    "tfbert.tasks.features": ["encode_choices", "encode_texts"],
    "tfbert.tasks.finetune": ["FinetuneResult", "KeepBest", "finetune"],
    "tfbert.tasks.models": ["EmbeddingDistiller", "MultipleChoice", "SentenceEmbedder", "SequenceClassifier",
                            "SequenceRegressor", "SiameseEmbedder", "SpanExtractor", "TokenClassifier"],
    "tfbert.tasks.pretrained": ["load_pretrained_encoder", "load_pretrained_preprocessor", "load_pretrained_tokenizer"],
    "tfbert.tasks.question_answering": ["QAExample", "QAFeatures", "decode_answers", "make_features"],
    "tfbert.tasks.sentence_pairs": ["NLI_LABELS", "SentencePairs", "combine_pairs", "read_sentence_pairs"],
    "tfbert.tasks.squad_examples": ["load_squad", "read_squad_json", "read_squad_jsonl"],
    "tfbert.tasks.tagging": ["encode_tagged_words", "word_predictions"],
    "tfbert.tasks.text_examples": ["GLUE_TASKS", "TextExamples", "load_glue", "read_text_examples"],
    "tfbert.tasks.text_models": ["load_cross_encoder", "load_text_embedder"],
    "tfbert.tasks.tokenization": ["HuggingFaceTokenizer", "Pieces", "TensorFlowTokenizer"],
})
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
