"""The tokenizer files `to-huggingface` writes give tfbert's ids in `transformers` (Korean, accents and added
tokens included), packed as tfbert packs pairs; a sentence embedder's folder loads in sentence-transformers."""

import json

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")

from tfbert.cli import main  # noqa: E402
from tfbert.convert.huggingface_tokenizer import write_huggingface_tokenizer  # noqa: E402
from tfbert.data.preprocessor import Preprocessor  # noqa: E402
from tfbert.text import BytePairTokenizer, SentencePieceTokenizer, WordPieceTokenizer  # noqa: E402
from tfbert.text.vocab_training import add_tokens, train_sentencepiece  # noqa: E402

ADDED = ["[ENT]", "covid", "코로나"]
ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
TEXTS = ["Hello, World! The naïve café opened in 1999, didn't it?", "Ça coûte 5 € — ÅÉÎ straße ﬁne",
         "covid [ENT] 코로나 바이러스", "double  spaces  here", "日本語のテキストです。"]


@pytest.fixture(scope="module")
def korean_texts(assets):
    lines = assets("text/ko/constitution.txt").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip()]


@pytest.fixture(scope="module")
def tokenizers(assets, korean_texts, tmp_path_factory):
    """tfbert tokenizers of every kind, each with the packing style of a family that uses it."""
    folder = tmp_path_factory.mktemp("tokenizers")
    add_tokens(assets("minilm/vocab.txt"), ADDED, folder / "wordpiece")
    (folder / "korean.txt").write_text("\n".join(korean_texts), encoding="utf-8")
    add_tokens(BytePairTokenizer.from_tiktoken(assets("bpe/gpt2.tiktoken")), ROBERTA_SPECIALS + ADDED, folder / "bpe")
    korean = train_sentencepiece(folder / "korean.txt", 1000, folder / "korean", lowercase=True)
    return {
        "wordpiece uncased, added tokens": (WordPieceTokenizer(folder / "wordpiece" / "vocab.txt"), "bert"),
        "wordpiece cased": (WordPieceTokenizer(assets("minilm/vocab.txt"), lowercase=False), "bert"),
        "sentencepiece korean, albert": (korean, "bert"),
        "sentencepiece korean, xlm-r packing": (korean, "roberta"),
        "sentencepiece japanese": (SentencePieceTokenizer(assets("spm/kyoto_ja_unigram_8000.model"),
                                                                         special_tokens={"pad": "<unk>"}), "bert"),
        "byte-level bpe, added tokens": (BytePairTokenizer.from_directory(folder / "bpe"), "roberta"),
    }


@pytest.mark.parametrize("kind", ["wordpiece uncased, added tokens", "wordpiece cased", "sentencepiece korean, albert",
                                  "sentencepiece korean, xlm-r packing", "sentencepiece japanese", "byte-level bpe, added tokens"])
def test_autotokenizer_gives_tfbert_ids_and_packing(tokenizers, korean_texts, kind, tmp_path):
    tokenizer, packing_style = tokenizers[kind]
    write_huggingface_tokenizer(tokenizer, tmp_path, packing_style=packing_style)
    texts = TEXTS + korean_texts[:40:4]
    ours = tokenizer.tokenize(texts).to_list()
    for use_fast in (True, False):
        theirs = transformers.AutoTokenizer.from_pretrained(tmp_path, use_fast=use_fast)
        assert theirs(texts, add_special_tokens=False)["input_ids"] == ours

    first, second = texts[0], texts[-1]
    packed = Preprocessor(tokenizer, 512, packing_style=packing_style).encode([first], [second])
    real = packed["padding_mask"][0].astype(bool)
    encoded = theirs(first, second)
    assert encoded["input_ids"] == packed["token_ids"][0][real].tolist()
    if packing_style == "bert":
        assert encoded["token_type_ids"] == packed["segment_ids"][0][real].tolist()


def test_sentencepiece_folders_keep_accents_and_hangul(tokenizers, tmp_path):
    tokenizer, _ = tokenizers["sentencepiece korean, albert"]
    write_huggingface_tokenizer(tokenizer, tmp_path, packing_style="bert")
    settings = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert settings["keep_accents"] is True and settings["do_lower_case"] is True
    assert {"spiece.model", "tokenizer.json", "special_tokens_map.json"} <= {path.name for path in tmp_path.iterdir()}
    assert tokenizer.unk_id not in tokenizer.tokenize(["대한민국은 민주공화국이다"]).to_list()[0]


def test_a_sentence_embedder_model_dir_becomes_a_sentence_transformers_model(assets, tmp_path):
    sentence_transformers = pytest.importorskip("sentence_transformers")
    from tfbert.config import EncoderConfig
    from tfbert.models.encoder import Encoder
    from tfbert.finetuning.embeddings import save_embedding_model
    from tfbert.models.tasks.embedding import SentenceEmbedder
    from tfbert.inference.text_models import load_text_embedder

    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"))
    encoder = Encoder(EncoderConfig(vocab_size=tokenizer.vocabulary_size(), hidden_size=32, num_layers=2, num_heads=4,
                                    intermediate_size=64, max_positions=64), name="encoder")
    model_dir = tmp_path / "run"
    save_embedding_model(model_dir, SentenceEmbedder(encoder, pooling="mean", normalize=True), tokenizer,
                         {"max_length": 32})
    Preprocessor.for_architecture("bert", tokenizer, 32).save(model_dir)

    assert main(["convert", "to-huggingface", str(model_dir), "-o", str(tmp_path / "st")]) == 0
    texts = ["A man is playing a guitar.", "대한민국은 민주공화국이다.", "short"]
    ours = load_text_embedder(model_dir).embed(texts)
    theirs = sentence_transformers.SentenceTransformer(str(tmp_path / "st"), device="cpu").encode(texts)
    assert json.loads((tmp_path / "st" / "modules.json").read_text())[-1]["path"] == "2_Normalize"
    np.testing.assert_allclose(ours, theirs, atol=1e-4, rtol=0)


def test_a_pretraining_run_with_a_sentencepiece_albert_loads_in_transformers_with_its_ids_and_outputs(
        tokenizers, korean_texts, tmp_path):
    torch = pytest.importorskip("torch")
    from tfbert import architectures
    from tfbert.config import EncoderConfig
    from tfbert.models.encoder import Encoder

    tokenizer, _ = tokenizers["sentencepiece korean, albert"]
    config = EncoderConfig(**architectures.get("albert").with_defaults(dict(
        vocab_size=tokenizer.vocabulary_size(), hidden_size=32, num_layers=2, num_heads=4, intermediate_size=64,
        max_positions=64, embedding_size=16)))
    run = tmp_path / "run"
    (run / "encoder").mkdir(parents=True)
    encoder = Encoder(config, name="encoder")
    encoder.save(run / "encoder" / "encoder.keras")
    preprocessor = Preprocessor.for_architecture("albert", tokenizer, 48)
    preprocessor.save(run)

    assert main(["convert", "to-huggingface", str(run), "-o", str(tmp_path / "hf")]) == 0
    texts = [line for line in korean_texts if len(line) < 40][:4] + ["Naïve café"]
    ours = preprocessor.encode(texts)
    theirs = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")(
        texts, padding="max_length", max_length=48, return_tensors="pt")
    np.testing.assert_array_equal(theirs["input_ids"].numpy(), ours["token_ids"])
    np.testing.assert_array_equal(theirs["token_type_ids"].numpy(), ours["segment_ids"])
    model = transformers.AutoModel.from_pretrained(tmp_path / "hf").eval()
    with torch.no_grad():
        hidden = model(**theirs).last_hidden_state.numpy()
    expected = np.asarray(encoder(ours, training=False)["sequence_output"])
    keep = ours["padding_mask"].astype(bool)
    np.testing.assert_allclose(expected[keep], hidden[keep], atol=1e-4, rtol=0)
