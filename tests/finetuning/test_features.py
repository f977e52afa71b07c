"""Packing, word-tag alignment, the byte-offset adapter and pretrained-encoder sources."""

import keras
import numpy as np
import pytest

from tfbert.models.encoder import build_encoder
from tfbert.finetuning.features import encode_choices, encode_texts
from tfbert.models.tasks import SequenceClassifier
from tfbert.finetuning.pretrained import load_pretrained_encoder, load_pretrained_tokenizer
from tfbert.finetuning.tagging import encode_tagged_words, word_predictions
from tfbert.finetuning.tokenization import TensorFlowTokenizer, byte_to_char_offsets

from task_fixtures import CLS, SEP, minilm_tokenizer
from models.test_task_models import CONFIG


def test_pairs_are_truncated_longest_first_and_packed():
    class Ids:
        cls_id, sep_id, pad_id = 1, 2, 0

        def encode_with_offsets(self, texts):
            from tfbert.finetuning.tokenization import Pieces
            return [Pieces([int(w) for w in t.split()], [0] * len(t.split()), [0] * len(t.split())) for t in texts]

    packed = encode_texts(Ids(), ["11 12 13 14 15"], ["16 17"], max_length=8, packing_style="bert")
    assert packed["token_ids"].tolist() == [[1, 11, 12, 13, 2, 16, 17, 2]]  # budget 5: the longer one loses 2
    features = encode_texts(Ids(), ["10 11 12 13 14"], ["20 21"], max_length=8, packing_style="bert")
    assert features["token_ids"].tolist() == [[1, 10, 11, 12, 2, 20, 21, 2]]
    assert features["segment_ids"].tolist() == [[0, 0, 0, 0, 0, 1, 1, 1]]
    choices = encode_choices(Ids(), ["10", "11"], [["20", "21"], ["22", "23"]], max_length=6, packing_style="bert")
    assert choices["token_ids"].shape == (2, 2, 6) and choices["token_ids"][1, 1].tolist() == [1, 11, 2, 23, 2, 0]
    with pytest.raises(ValueError, match="same number of choices"):
        encode_choices(Ids(), ["a", "b"], [["1"], ["1", "2"]], packing_style="bert")
    with pytest.raises(ValueError, match="cannot tell the packing style of Ids.*packing_style='bert' or 'roberta'"):
        encode_texts(Ids(), ["10"], max_length=8)   # ids alone do not say BERT or RoBERTa


def test_a_tokenizer_packs_in_the_style_of_its_special_tokens(assets):
    from tfbert.data.preprocessor import Preprocessor
    from tfbert.text import SentencePieceTokenizer, WordPieceTokenizer

    roberta = SentencePieceTokenizer(assets("spm/botchan_en_unigram_1000.model"), special_tokens={"pad": "<unk>"})
    features = encode_texts(roberta, ["a b"], ["c"], max_length=12)   # XLM-R's <s> and </s>
    bos, eos = roberta.cls_id, roberta.sep_id
    row = features["token_ids"][0].tolist()
    assert row[0] == bos and row.count(eos) == 3 and features["segment_ids"].max() == 0   # <s> a </s></s> b </s>
    assert Preprocessor(roberta, 12).packing_style == "roberta"
    wordpiece = WordPieceTokenizer(str(assets("minilm/vocab.txt")))
    assert Preprocessor(wordpiece, 12).packing_style == "bert"
    assert Preprocessor(wordpiece, 12, architecture="roberta").packing_style == "roberta"   # the family decides
    with pytest.raises(ValueError, match="disagrees with the preprocessor's 'bert'"):
        encode_texts(Preprocessor(wordpiece, 12), ["a"], packing_style="roberta")


def test_word_labels_go_on_the_first_piece_only(assets):
    tokenizer = minilm_tokenizer(assets)
    sentences = [["Lovelace", "wrote", "notes", "in", "1843"], ["Zoë", "sang"]]
    tags = [[1, 0, 0, 0, 2], [1, 0]]
    features, labels, first = encode_tagged_words(tokenizer, sentences, tags, max_length=16)
    pieces = tokenizer.encode_with_offsets([" ".join(words) for words in sentences])
    assert len(pieces[0]) > 5  # some word is split
    row = features["token_ids"][0]
    assert row[0] == CLS and row[len(pieces[0]) + 1] == SEP
    weights = labels["label_weights"][0]
    assert weights.sum() == 5 and weights[first[0]].tolist() == [1] * 5
    assert labels["labels"][0][first[0]].tolist() == tags[0]
    assert labels["labels"][0][weights == 0].tolist() == [0] * int((weights == 0).sum())
    logits = np.zeros((2, 16, 3))
    logits[0, first[0], tags[0]] = 1.0
    logits[1, first[1, :2], tags[1]] = 1.0
    assert word_predictions(logits, first, sentences) == tags
    # truncation: words past max_length get no first piece and predict tag 0
    short, short_labels, short_first = encode_tagged_words(tokenizer, sentences, tags, max_length=4)
    assert short_first[0].tolist()[1:] == [-1] * 4 and short_labels["label_weights"][0].sum() == 1  # love ##lace
    with pytest.raises(ValueError, match="sentence 1 has 2 words but 1 tags"):
        encode_tagged_words(tokenizer, sentences, [[1, 0, 0, 0, 2], [1]])


def test_byte_offsets_become_character_offsets(assets):
    import tensorflow_text

    assert byte_to_char_offsets("é東a").tolist() == [0, 1, 1, 2, 2, 2, 3]
    cased = tensorflow_text.BertTokenizer(str(assets("minilm/vocab.txt")), lower_case=False)
    text = "naïve Zoë 東京"
    pieces = TensorFlowTokenizer(cased, CLS, SEP).encode_with_offsets([text])[0]
    words = [text[start:end] for start, end in zip(pieces.starts, pieces.ends)]
    assert "".join(words) == text.replace(" ", "")


def test_pretrained_encoder_from_keras_files_and_folders(tmp_path, assets):
    encoder = build_encoder(CONFIG)
    encoder.save(tmp_path / "encoder.keras")
    SequenceClassifier(encoder, num_classes=2).save(tmp_path / "classifier.keras")
    (tmp_path / "run" / "encoder").mkdir(parents=True)
    encoder.save(tmp_path / "run" / "encoder" / "encoder.keras")
    x = {"token_ids": np.array([[5, 6, 7]], "int32"), "segment_ids": np.zeros((1, 3), "int32"),
         "padding_mask": np.ones((1, 3), "int32")}
    expected = np.asarray(encoder(x)["sequence_output"])
    for source in (tmp_path / "encoder.keras", tmp_path, tmp_path / "classifier.keras", tmp_path / "run"):
        loaded = load_pretrained_encoder(source)
        np.testing.assert_array_equal(np.asarray(loaded(x)["sequence_output"]), expected)
    assert load_pretrained_encoder(assets("minilm/config.json").parent).config.hidden_size == 384
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="is none of the kinds tfbert reads"):
        load_pretrained_encoder(tmp_path / "empty")
    dense = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    dense.save(tmp_path / "other.keras")
    with pytest.raises(ValueError, match="with no tfbert encoder"):
        load_pretrained_encoder(tmp_path / "other.keras")


def test_pretrained_encoder_from_a_bucket(tmp_path):
    import tensorflow as tf

    encoder = build_encoder(CONFIG)
    encoder.save(tmp_path / "encoder.keras")
    tf.io.gfile.makedirs("ram://bucket/run/encoder")
    tf.io.gfile.copy(str(tmp_path / "encoder.keras"), "ram://bucket/run/encoder/encoder.keras", overwrite=True)
    for source in ("ram://bucket/run", "ram://bucket/run/encoder", "ram://bucket/run/encoder/encoder.keras"):
        assert load_pretrained_encoder(source).count_params() == encoder.count_params()
    with pytest.raises(FileNotFoundError, match="ram://bucket/none"):
        load_pretrained_encoder("ram://bucket/none")


def test_pretrained_tokenizer_of_runs_encoders_and_hugging_face_folders(tmp_path, assets):
    from tfbert.export.sources import resolve_source
    from tfbert.text import WordPieceTokenizer

    minilm = assets("minilm/config.json").parent
    tokenizer = load_pretrained_tokenizer(minilm)   # Hugging Face folder: vocab.txt, do_lower_case
    assert isinstance(tokenizer, WordPieceTokenizer) and tokenizer.lowercase
    assert tokenizer.tokenize(["Hello world"]).to_list() == [[7592, 2088]]
    tokenizer.save_assets(tmp_path / "run" / "tokenizer")
    (tmp_path / "run" / "encoder").mkdir()
    build_encoder(CONFIG).save(tmp_path / "run" / "encoder" / "encoder.keras")
    for source in (tmp_path / "run", tmp_path / "run" / "tokenizer", tmp_path / "run" / "encoder",
                   tmp_path / "run" / "encoder" / "encoder.keras"):
        assert load_pretrained_tokenizer(source).vocabulary() == tokenizer.vocabulary()
    with pytest.raises(ValueError, match="is none of the kinds tfbert reads"):
        load_pretrained_tokenizer(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_pretrained_tokenizer(tmp_path / "missing")
    # Exporting a Hugging Face folder finds its tokenizer too (its tokenizer_config.json is not tfbert's).
    assert isinstance(resolve_source(minilm).tokenizer, WordPieceTokenizer)


def test_encode_texts_takes_a_tfbert_tokenizer(assets):
    from tfbert.text import WordPieceTokenizer

    wordpiece = WordPieceTokenizer(str(assets("minilm/vocab.txt")))
    features = encode_texts(wordpiece, ["Hello world"], max_length=6)
    assert features["token_ids"].tolist() == [[CLS, 7592, 2088, SEP, 0, 0]]
    with pytest.raises(TypeError, match="tfbert.text tokenizer"):
        encode_texts(object(), ["Hello"], max_length=6)


def test_tfbert_wordpiece_offsets_through_the_adapter_reproduce_the_original_text(assets):
    from tfbert.text import WordPieceTokenizer

    wordpiece = WordPieceTokenizer(str(assets("minilm/vocab.txt")))
    tokenizer = TensorFlowTokenizer(wordpiece, wordpiece.cls_id, wordpiece.sep_id, wordpiece.pad_id)
    text = "Der Zürcher Künstler „Heureka“ 東京 naïve"
    pieces = tokenizer.encode_with_offsets([text])[0]
    assert "".join(text[s:e] for s, e in zip(pieces.starts, pieces.ends)) == text.replace(" ", "")
    assert pieces.ids == minilm_tokenizer(assets).encode_with_offsets([text])[0].ids


@pytest.mark.parametrize("kind", ["wordpiece", "sentencepiece", "byte_bpe"])
def test_features_take_the_ids_without_offsets_and_they_equal_the_ids_with_offsets(assets, kind):
    from tfbert.finetuning.tokenization import as_piece_tokenizer, piece_ids
    from tfbert.text import BytePairTokenizer, SentencePieceTokenizer, WordPieceTokenizer

    tokenizer = {"wordpiece": lambda: WordPieceTokenizer(str(assets("minilm/vocab.txt"))),
                 "sentencepiece": lambda: SentencePieceTokenizer(str(assets("spm/botchan_en_unigram_1000.model")),
                                                                 special_tokens={"pad": "<unk>"}),
                 "byte_bpe": lambda: BytePairTokenizer.from_tiktoken(assets("bpe/gpt2.tiktoken"), special_tokens={
                     "<|endoftext|>": 50256, "<s>": 50257, "</s>": 50258, "<pad>": 50259})}[kind]()
    lines = assets("text/lee_background.cor").read_text(encoding="utf-8").splitlines()[:100]
    korean = assets("text/ko/constitution.txt").read_text(encoding="utf-8").splitlines()[:20]
    texts = [*lines, *korean, "", "Der Zürcher Künstler „Heureka“ 東京 naïve", "  spaced\tout\n", "ﬁ Ⅻ ½ ǅ"]
    pieces = as_piece_tokenizer(tokenizer)
    assert piece_ids(pieces, texts) == [row.ids for row in pieces.encode_with_offsets(texts)]
    assert encode_texts(tokenizer, texts, max_length=32)["token_ids"].shape == (len(texts), 32)
