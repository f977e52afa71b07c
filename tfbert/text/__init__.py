"""In-graph tokenizers for the BERT family: WordPiece, SentencePiece and byte-level BPE."""

from tfbert.text.byte_pair_tokenizer import BytePairTokenizer
from tfbert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from tfbert.text.wordpiece_tokenizer import WordPieceTokenizer

__all__ = ["BytePairTokenizer", "SentencePieceTokenizer", "WordPieceTokenizer"]
