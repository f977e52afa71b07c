"""In-graph tokenizers for the BERT family: WordPiece, SentencePiece and byte-level BPE."""

from tfbert.graph_code import declare_graph_code
from tfbert.text.byte_pair_tokenizer import BytePairTokenizer
from tfbert.text.loading import load_tokenizer
from tfbert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from tfbert.text.vocab_insertion import insert_words
from tfbert.text.vocab_training import add_tokens, train_byte_bpe, train_sentencepiece, train_wordpiece
from tfbert.text.wordpiece_tokenizer import WordPieceTokenizer

declare_graph_code()   # before any pipeline is traced: see tfbert/graph_code.py

__all__ = [
    "BytePairTokenizer",
    "SentencePieceTokenizer",
    "WordPieceTokenizer",
    "add_tokens",
    "insert_words",
    "load_tokenizer",
    "train_byte_bpe",
    "train_sentencepiece",
    "train_wordpiece",
]
