"""tfbert: BERT-family text encoders for TensorFlow and Keras 3.

The public API, imported on first use: `import tfbert` itself imports neither TensorFlow nor Keras.

| name | what |
|---|---|
| `load_config`, `ModelConfig`, `EncoderConfig` | validated configs (`tfbert configs` lists the shipped ones) |
| `architectures` | the registry of families (`architectures.get("albert")`) |
| `Encoder`, `build_encoder` | the encoder of any family |
| `PretrainingModel` and each family's classes (`ElectraPretrainingModel`, ...: its spec's `keras_classes`) | pretraining models |
| `SequenceClassifier`, `SequenceRegressor`, `TokenClassifier`, `SpanExtractor`, `MultipleChoice`, `SentenceEmbedder`, `SiameseEmbedder` | task models |
| `load_tokenizer`, `Preprocessor` | tokenizers; text to encoder inputs, one per model |
| `pretrain` | pretraining from text files |
| `convert` | Hugging Face checkpoints in and out (`convert.load_huggingface`, `convert.huggingface_config`) |
| `export_saved_model` | a SavedModel taking raw strings, for TF Serving |
| `artifacts` | `artifacts.open(path)`: what any folder or file tfbert (or Hugging Face, TF1, keras-hub) wrote is |

Example:
    >>> import tfbert
    >>> config = tfbert.load_config("bert_tiny")
    >>> config.architecture, config.encoder.num_layers, config.encoder.hidden_size
    ('bert', 2, 128)
    >>> tfbert.architectures.get(config.architecture).default_objectives
    ('mlm', 'nsp')
    >>> tokenizer = tfbert.text.WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world"])
    >>> preprocessor = tfbert.Preprocessor.for_architecture("bert", tokenizer, sequence_length=6)
    >>> inputs = preprocessor.encode(["hello world"], ["world"])
    >>> inputs["token_ids"].tolist(), inputs["segment_ids"].tolist()
    ([[2, 5, 6, 3, 6, 3]], [[0, 0, 0, 0, 1, 1]])
    >>> small = config.replace(encoder=config.encoder.replace(vocab_size=tokenizer.vocabulary_size(), num_layers=1))
    >>> encoder = tfbert.build_encoder(small.encoder)
    >>> tuple(encoder(inputs)["sequence_output"].shape)
    (1, 6, 128)
    >>> classifier = tfbert.SequenceClassifier(encoder, num_classes=3)
    >>> tuple(classifier(inputs)["logits"].shape)
    (1, 3)
    >>> model = tfbert.PretrainingModel(small)
    >>> import numpy as np
    >>> sorted(model({**inputs, "masked_positions": np.array([[1, 2]], "int32")}))
    ['mlm_logits', 'nsp_logits']
    >>> tfbert.convert.huggingface_config(small)["model_type"]
    'bert'
"""

from tfbert._lazy import by_module, family_exports, lazy_exports
from tfbert.keras_classes import register_on_keras_import
from tfbert.xla_flags import allow_fusible_clustering

__version__ = "0.1.0"

_EXPORTS = by_module({
    "tfbert.config": ["EncoderConfig", "ModelConfig", "load_config"],
    "tfbert.architectures:": ["architectures"],
    "tfbert.artifacts:": ["artifacts"],
    "tfbert.text:": ["text"],
    "tfbert.convert:": ["convert"],
    # The families' classes come from their specs (`more=` below), as `tfbert.models` exports them.
    "tfbert.models": ["Encoder", "build_encoder", "PretrainingModel"],
    "tfbert.models.tasks": ["MultipleChoice", "SentenceEmbedder", "SequenceClassifier", "SequenceRegressor",
                            "SiameseEmbedder", "SpanExtractor", "TokenClassifier"],
    "tfbert.text": ["load_tokenizer"],
    "tfbert.data.preprocessor": ["Preprocessor"],
    "tfbert.training.pretraining": ["pretrain"],
    "tfbert.export.saved_model": ["export_saved_model"],
})
# TensorFlow reads TF_XLA_FLAGS once, at its first function: the CPU bfloat16 path's flags go in now.
allow_fusible_clustering()
# `keras.models.load_model` finds every tfbert class once Keras is imported, without importing it here.
register_on_keras_import()
# `__all__` too is lazy (`lazy_exports`): it holds the families' classes, which reading the specs gives.
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, more=family_exports)
