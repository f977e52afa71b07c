"""Tokenizers for the task tests: a whitespace toy one and MiniLM's WordPiece (Hugging Face `tokenizers`).

`tensorflow_text.BertTokenizer(lower_case=True)` is not used for spans: its
offsets point into the lower-cased, accent-stripped text ("Zürcher" has one
byte less), not into the original.
"""

import re

from tfbert.tasks.tokenization import HuggingFaceTokenizer, Pieces

CLS, SEP, PAD = 101, 102, 0


class WhitespaceTokenizer:
    """One piece per whitespace-separated word; ids assigned on first sight (from 1000 up)."""

    cls_id, sep_id, pad_id = 1, 2, 0

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
