"""Tokenizers for the task tests: a whitespace toy one and MiniLM's WordPiece (Hugging Face `tokenizers`).

`tensorflow_text.BertTokenizer(lower_case=True)` is not used for spans: its
offsets point into the lower-cased, accent-stripped text ("Zürcher" has one
byte less), not into the original.
"""

import re

import numpy as np

from tfbert.finetuning.tokenization import HuggingFaceTokenizer, Pieces

CLS, SEP, PAD = 101, 102, 0


class WhitespaceTokenizer:
    """One piece per whitespace-separated word; ids assigned on first sight (from 1000 up)."""

    cls_id, sep_id, pad_id = 1, 2, 0
    special_tokens = {"cls": "[CLS]", "sep": "[SEP]", "pad": "[PAD]"}  # packed BERT-style

    def __init__(self):
        self.vocabulary = {}

    def encode_with_offsets(self, texts):
        pieces = []
        for text in texts:
            matches = list(re.finditer(r"\S+", text))
            ids = [self.vocabulary.setdefault(match.group(), 1000 + len(self.vocabulary)) for match in matches]
            pieces.append(Pieces(ids, [match.start() for match in matches], [match.end() for match in matches]))
        return pieces


def minilm_tokenizer(assets):
    import tokenizers

    wordpiece = tokenizers.BertWordPieceTokenizer(str(assets("minilm/vocab.txt")), lowercase=True)
    return HuggingFaceTokenizer(wordpiece, cls_id=CLS, sep_id=SEP, pad_id=PAD)


def truncated_minilm(assets, num_layers=2):
    """The first `num_layers` transformer layers of all-MiniLM-L6-v2 with its embeddings and pooler."""
    from tfbert.convert.huggingface import load_huggingface
    from tfbert.models.encoder import Encoder

    full = load_huggingface(assets("minilm/config.json").parent)
    small = Encoder(full.config.replace(num_layers=num_layers), name="encoder")
    for layer in small.layers:
        if layer.weights:
            layer.set_weights(full.get_layer(layer.name).get_weights())
    return small


class CompactVocabulary:
    """A tokenizer's ids renumbered in order of first use (pad, cls, sep first).

    The learning tests' data uses a few hundred of MiniLM's 30,522 pieces; an encoder whose token
    table holds only those (`compact_encoder`) gives the same outputs for the same texts, and the
    table and its optimizer state stop being most of each training step's work. Tokenize all the
    data before building the encoder: the vocabulary is frozen then, and a new piece is an error.
    """

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.original_ids = [tokenizer.pad_id, tokenizer.cls_id, tokenizer.sep_id]
        self.compact_ids = {old: new for new, old in enumerate(self.original_ids)}
        self.pad_id, self.cls_id, self.sep_id = 0, 1, 2
        self.special_tokens = tokenizer.special_tokens   # the same tokens, so the same packing style
        self.frozen = False

    def _compact(self, old: int) -> int:
        if old not in self.compact_ids:
            assert not self.frozen, "tokenize all the data before building the encoder"
            self.compact_ids[old] = len(self.original_ids)
            self.original_ids.append(old)
        return self.compact_ids[old]

    def encode_with_offsets(self, texts):
        return [Pieces([self._compact(old) for old in pieces.ids], pieces.starts, pieces.ends)
                for pieces in self.tokenizer.encode_with_offsets(texts)]


def compact_encoder(config, weights, vocabulary: CompactVocabulary):
    """An `Encoder` of `config` with `weights` whose token table keeps the rows `vocabulary` uses."""
    from tfbert.models.encoder import Encoder

    vocabulary.frozen = True
    rows = np.array(vocabulary.original_ids)
    weights = [weight[rows] if weight.shape[0] == config.vocab_size and weight.ndim == 2 else weight
               for weight in weights]
    encoder = Encoder(config.replace(vocab_size=len(rows)), name="encoder")
    encoder.set_weights(weights)
    return encoder
