"""Vocabulary training on Botchan: each kind loads in its tokenizer and round-trips text."""

import json

import tensorflow as tf

from tfbert.text import (
    BytePairTokenizer,
    SentencePieceTokenizer,
    WordPieceTokenizer,
    add_tokens,
    load_tokenizer,
    train_byte_bpe,
    train_sentencepiece,
    train_wordpiece,
)

SENTENCES = ["I am a cat.", "It was a fine day, said the Madonna.", "Botchan went to the school in Shikoku."]


def test_train_wordpiece(assets, tmp_path):
    tokenizer = train_wordpiece(assets("text/botchan.txt"), vocab_size=1000, output_dir=tmp_path)
    assert isinstance(load_tokenizer(tmp_path), WordPieceTokenizer)
    assert tokenizer.vocabulary()[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert tokenizer.vocabulary_size() == 1000
    ids = tokenizer.tokenize(SENTENCES)
    assert tokenizer.unk_id not in ids.flat_values.numpy()
    assert tokenizer.detokenize(ids).numpy().tolist() == [
        b"i am a cat .",
        b"it was a fine day , said the madonna .",
        b"botchan went to the school in shikoku .",
    ]


def test_train_sentencepiece_both_kinds_from_dataset(assets, tmp_path):
    lines = tf.data.TextLineDataset(str(assets("text/botchan.txt"))).batch(100)
    for model_type in ("unigram", "bpe"):
        tokenizer = train_sentencepiece(lines, vocab_size=800, output_dir=tmp_path / model_type, model_type=model_type, lowercase=True)
        assert isinstance(load_tokenizer(tmp_path / model_type), SentencePieceTokenizer)
        assert tokenizer.vocabulary_size() == 800
        assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id) == (0, 1, 2, 3, 4)
        ids = tokenizer.tokenize(SENTENCES)
        assert tokenizer.detokenize(ids).numpy().tolist() == [s.lower().encode() for s in SENTENCES]


def test_train_byte_bpe(assets, tmp_path):
    tokenizer = train_byte_bpe(assets("text/botchan.txt"), vocab_size=600, output_dir=tmp_path)
    assert isinstance(load_tokenizer(tmp_path), BytePairTokenizer)
    assert tokenizer.vocabulary_size() == 600
    assert (tokenizer.cls_id, tokenizer.pad_id, tokenizer.sep_id, tokenizer.unk_id, tokenizer.mask_id) == (0, 1, 2, 3, 599)
    texts = SENTENCES + ["ünïcode 中文 😀 never seen"]
    ids = tokenizer.tokenize(texts)
    assert tokenizer.detokenize(ids).numpy().tolist() == [t.encode() for t in texts]
    # Merges learned on Botchan compress its common words into single tokens.
    assert len(tokenizer.tokenize(" the").numpy()) == 1
    assert BytePairTokenizer(tmp_path / "vocab.json", tmp_path / "merges.txt").tokenize(texts).to_list() == ids.to_list()


def test_add_tokens_keeps_existing_ids(assets, tmp_path, wordpiece, gpt2_bpe):
    size = add_tokens(wordpiece, ["[ENT]", "hello", "covid19", "[ENT]"], output_dir=tmp_path / "wp")
    assert size == 30522 + 2
    grown = WordPieceTokenizer(tmp_path / "wp" / "vocab.txt")
    assert grown.vocabulary()[:30522] == wordpiece.vocabulary()
    assert grown.token_to_id("[ENT]") == 30522 and grown.token_to_id("covid19") == 30523
    assert grown.tokenize("covid19 hello").numpy().tolist() == [30523, 7592]

    size = add_tokens(gpt2_bpe, ["<mask>", "<pad>"], output_dir=tmp_path / "bpe")
    assert size == 50259
    vocabulary = json.loads((tmp_path / "bpe" / "vocab.json").read_text(encoding="utf-8"))
    assert vocabulary["<mask>"] == 50257 and vocabulary["Ġworld"] == 995
    roberta_like = BytePairTokenizer.from_directory(tmp_path / "bpe")
    assert roberta_like.mask_id == 50257 and roberta_like.pad_id == 50258

    copy = tmp_path / "vocab.txt"
    copy.write_text(assets("minilm/vocab.txt").read_text(encoding="utf-8"), encoding="utf-8")
    assert add_tokens(copy, ["brandnewtoken"]) == 30523
