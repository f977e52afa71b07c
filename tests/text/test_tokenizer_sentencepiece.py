"""SentencePieceTokenizer: ids (and, for unigram models, offsets) equal the `sentencepiece` library's
for the Botchan and Kyoto models."""

import numpy as np
import pytest
import sentencepiece
import tensorflow as tf
from text_cases import HARD_STRINGS, as_text, batched

from tfbert.text import SentencePieceTokenizer

MODELS = ["spm/botchan_en_bpe_1000.model", "spm/botchan_en_unigram_1000.model", "spm/kyoto_ja_unigram_8000.model"]
JAPANESE = ["吾輩は猫である。名前はまだ無い。", "どこで生れたかとんと見当がつかぬ。", "京都大学は日本の大学です。", "東京タワーの高さは３３３メートル"]


def reference(assets, model):
    return sentencepiece.SentencePieceProcessor(model_file=str(assets(model)))


def assert_same_ids(tokenizer, processor, texts, lowercase=False):
    """Ids must equal `sentencepiece`'s on every line."""
    mismatches = []
    for batch in batched(texts, 2048):
        got = tokenizer.tokenize(tf.constant(batch)).to_list()
        decoded = [as_text(t) if isinstance(t, bytes) else t for t in batch]
        expected = processor.encode([t.lower() if lowercase else t for t in decoded])
        mismatches += [(text, want, have) for text, want, have in zip(batch, expected, got) if want != have]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ, first: {mismatches[:3]}"


def assert_same_offsets(tokenizer, processor, texts):
    """Ids and byte offsets must equal sentencepiece's pieces' id, begin and end on every line."""
    mismatches = []
    for batch in batched(texts, 2048):
        ids, starts, ends = tokenizer.tokenize_with_offsets(tf.constant(batch))
        for text, row_ids, row_starts, row_ends in zip(batch, ids.to_list(), starts.to_list(), ends.to_list()):
            proto = processor.encode(as_text(text) if isinstance(text, bytes) else text, return_type="proto")
            want = [(p.id, p.begin, p.end) for p in proto.pieces]
            if want != list(zip(row_ids, row_starts, row_ends)):
                mismatches.append(text[:80])
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ, first: {mismatches[:3]}"


def real_texts(botchan_lines, wiki_lines, korean_lines):
    texts = botchan_lines + wiki_lines[:4000] + korean_lines[:3000] + JAPANESE + HARD_STRINGS
    assert len(texts) == 10_799
    return texts


# Lines where TF-Text's bundled SentencePiece alone breaks an exact-score tie the other way.
TIES = ["Hotta....... if you start a scrimmage here", "-------------.---------------", "22,000", "population 100,000"]


@pytest.mark.parametrize("model", MODELS)
def test_real_text_exact(assets, model, botchan_lines, wiki_lines, korean_lines):
    tokenizer = SentencePieceTokenizer(assets(model))
    assert_same_ids(tokenizer, reference(assets, model), real_texts(botchan_lines, wiki_lines, korean_lines) + TIES)


@pytest.mark.parametrize("model", MODELS[1:])
def test_unigram_offsets_exact(assets, model, botchan_lines, wiki_lines, korean_lines):
    """Offsets are sentencepiece's too, also where the segmentation differs from TF-Text's."""
    tokenizer = SentencePieceTokenizer(assets(model))
    assert_same_offsets(tokenizer, reference(assets, model), real_texts(botchan_lines, wiki_lines, korean_lines) + TIES)


def test_long_rows_reset_scores_like_sentencepiece(assets, botchan_lines):
    """sentencepiece restarts its running score past 1e5 (rows of roughly 4,500+ characters), which
    changes float32 rounding and so ties; a 1 MB row crosses that point some twenty times."""
    model = MODELS[1]
    tokenizer, processor = SentencePieceTokenizer(assets(model)), reference(assets, model)
    megabyte = ("\n".join(botchan_lines) * 4)[:1_000_000]
    assert_same_ids(tokenizer, processor, [megabyte, "short", " ".join(botchan_lines)[:60_000]])
    assert_same_offsets(tokenizer, processor, [" ".join(botchan_lines)[:60_000], "Hotta....... ok", ""])


@pytest.mark.slow
def test_long_rows_without_clean_positions(assets, botchan_lines):
    """Runs no piece boundary is certain in (`.......`) are emulated step by step past a reset (slow)."""
    for model in MODELS[1:]:
        tokenizer, processor = SentencePieceTokenizer(assets(model)), reference(assets, model)
        assert_same_ids(tokenizer, processor, ["......." * 15_000, ("\n".join(botchan_lines) * 4)[:1_000_000]])


def test_exact_false_is_tf_text_alone(assets, tmp_path):
    model = assets(MODELS[1])
    fast = SentencePieceTokenizer(model, exact=False)
    tf_text = tf_text_tokenizer(model)
    assert fast.tokenize(TIES).to_list() == tf_text.tokenize(TIES).to_list()
    assert fast.tokenize(TIES).to_list() != SentencePieceTokenizer(model).tokenize(TIES).to_list()
    fast.save_assets(tmp_path)
    assert SentencePieceTokenizer.from_directory(tmp_path).exact is False


def tf_text_tokenizer(model):
    import tensorflow_text

    return tensorflow_text.SentencepieceTokenizer(model=model.read_bytes(), out_type=tf.int32)


def test_input_ranks(assets):
    """Scalars give 1-D results, higher ranks nested ragged ones, as TF-Text's tokenizer does."""
    tokenizer = SentencePieceTokenizer(assets(MODELS[1]))
    reference_tokenizer = tf_text_tokenizer(assets(MODELS[1]))
    for strings in ["Hello there", [["a b", "c"], ["", "d e f"]], [["x"]]]:
        for got, want in zip(tokenizer.tokenize_with_offsets(strings), reference_tokenizer.tokenize_with_offsets(strings)):
            assert got.shape.rank == want.shape.rank
            assert as_list(got) == as_list(want)


def as_list(tensor):
    return tensor.to_list() if isinstance(tensor, tf.RaggedTensor) else tensor.numpy().tolist()


def test_exact_in_saved_model_and_dataset(assets, botchan_lines, tmp_path):
    tokenizer = SentencePieceTokenizer(assets(MODELS[1]))
    processor = reference(assets, MODELS[1])
    texts = TIES + ["", " ".join(botchan_lines)[:50_000]]

    class Serving(tf.Module):
        def __init__(self):
            super().__init__()
            self.tokenizer = tokenizer

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def tokenize_with_offsets(self, strings):
            return self.tokenizer.tokenize_with_offsets(strings)

    tf.saved_model.save(Serving(), str(tmp_path / "saved"))
    restored = tf.saved_model.load(str(tmp_path / "saved"))
    ids, starts, ends = restored.tokenize_with_offsets(tf.constant(texts))
    for text, row in zip(texts, zip(ids.to_list(), starts.to_list(), ends.to_list())):
        assert [(p.id, p.begin, p.end) for p in processor.encode(text, return_type="proto").pieces] == list(zip(*row))
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(2).map(tokenizer.tokenize, num_parallel_calls=2)
    assert [row for batch in dataset for row in batch.to_list()] == processor.encode(texts)


def test_unsupported_unigram_model_warns_and_uses_tf_text(assets, tmp_path):
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(assets(MODELS[2]).read_bytes())
    longer = {c for p in model.pieces if len(p.piece) > 1 for c in p.piece}
    single = next(p for p in model.pieces if len(p.piece) == 1 and p.piece in longer and len(p.piece.encode()) > 1)
    single.type = single.UNUSED  # a CJK character in longer pieces, no longer a piece of its own
    path = tmp_path / "odd.model"
    path.write_bytes(model.SerializeToString())
    with pytest.warns(UserWarning, match="occur in pieces but are not pieces themselves"):
        tokenizer = SentencePieceTokenizer(path)
    texts = JAPANESE + [single.piece * 3]
    assert tokenizer.tokenize(texts).to_list() == tf_text_tokenizer(path).tokenize(texts).to_list()


def test_ascii_characters_only_inside_pieces(tmp_path, botchan_lines):
    """User-defined symbols bring characters (`<`, `@`) that are no pieces of their own; alone they
    are unknown, one character each, as in sentencepiece."""
    import io

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(botchan_lines), model_writer=model, vocab_size=600, minloglevel=2,
        user_defined_symbols=["<br>", "@@"], treat_whitespace_as_suffix=True,
    )
    path = tmp_path / "user.model"
    path.write_bytes(model.getvalue())
    texts = botchan_lines[:2000] + ["a<br>b @@ c <b> @ @@@", "<<<>>> @", "x  <br>  y"]
    processor = sentencepiece.SentencePieceProcessor(model_file=str(path))
    tokenizer = SentencePieceTokenizer(path)
    assert_same_ids(tokenizer, processor, texts)
    assert_same_offsets(tokenizer, processor, texts)


def test_float32_cumsum_runs_left_to_right():
    """The reset emulation relies on `tf.math.cumsum` adding float32 left to right, as the kernels do."""
    values = np.random.default_rng(0).normal(-8, 3, size=200_000).astype(np.float32)
    values[0] = -99_000.5
    expected = np.cumsum(values, dtype=np.float32)  # numpy's cumsum is sequential
    assert np.array_equal(tf.math.cumsum(tf.constant(values)).numpy(), expected)


def test_special_tokens_from_model(assets):
    tokenizer = SentencePieceTokenizer(assets(MODELS[1]))
    processor = reference(assets, MODELS[1])
    assert tokenizer.unk_id == processor.unk_id() == 0
    assert tokenizer.bos_id == processor.bos_id() and tokenizer.eos_id == processor.eos_id()
    assert tokenizer.cls_id == tokenizer.bos_id and tokenizer.sep_id == tokenizer.eos_id
    assert tokenizer.mask_id is None and tokenizer.pad_id is None
    assert tokenizer.special_token_ids() == sorted({0, processor.bos_id(), processor.eos_id()})
    assert tokenizer.vocabulary_size() == processor.get_piece_size() == len(tokenizer.vocabulary())
    assert tokenizer.id_to_token(5) == processor.id_to_piece(5)
    assert tokenizer.token_to_id(processor.id_to_piece(7)) == 7


def test_special_token_mapping_is_configurable(assets):
    processor = reference(assets, MODELS[1])
    tokenizer = SentencePieceTokenizer(assets(MODELS[1]), special_tokens={"mask": processor.id_to_piece(9), "cls": None})
    assert tokenizer.mask_id == 9 and tokenizer.cls_id is None
    with pytest.raises(ValueError, match="not in the vocabulary"):
        SentencePieceTokenizer(assets(MODELS[1]), special_tokens={"mask": "[NOT-THERE]"})


def test_offsets_and_detokenize(assets, botchan_lines):
    tokenizer = SentencePieceTokenizer(assets(MODELS[0]))
    lines = botchan_lines[:500]
    ids, starts, ends = tokenizer.tokenize_with_offsets(tf.constant(lines))
    for line, row_ids, row_starts, row_ends in zip(lines, ids.to_list(), starts.to_list(), ends.to_list()):
        data = line.encode()
        for token_id, start, end in zip(row_ids, row_starts, row_ends):
            if token_id == tokenizer.unk_id:
                continue
            piece = tokenizer.id_to_token(token_id).replace("\u2581", " ")
            assert data[start:end].decode().strip() == piece.strip()
    assert tokenizer.detokenize(ids).numpy().tolist() == [line.encode() for line in reference(assets, MODELS[0]).decode(ids.to_list())]


def test_bad_input_never_crashes(assets):
    tokenizer = SentencePieceTokenizer(assets(MODELS[2]))
    rng = np.random.default_rng(1)
    blobs = [rng.integers(0, 256, size=int(n), dtype=np.uint8).tobytes() for n in rng.integers(0, 300, size=100)]
    assert tokenizer.tokenize(tf.constant(blobs)).shape[0] == 100
    assert tokenizer.tokenize(tf.constant([], tf.string)).shape[0] == 0


def test_empty_and_whitespace_rows(assets):
    tokenizer = SentencePieceTokenizer(assets(MODELS[1]))
    processor = reference(assets, MODELS[1])
    texts = ["", " ", " " * 9000, "\t" * 9000, "a" + " " * 9000 + "b", ""]
    assert_same_ids(tokenizer, processor, texts)
    assert_same_offsets(tokenizer, processor, texts)
    assert_same_offsets(tokenizer, processor, ["", " " * 9000])
    assert tokenizer.tokenize(tf.constant([], tf.string)).shape[0] == 0
    assert tokenizer.tokenize_with_offsets(tf.constant([], tf.string))[0].shape[0] == 0


def test_random_strings_exact(assets):
    """Seeded random strings over an alphabet heavy in ties, unknowns, controls, spaces and
    normalization: ids and offsets equal sentencepiece's."""
    rng = np.random.default_rng(7)
    alphabet = list(" \t\n\x00\x0b\u3000\u00a0\u200b\ufeff.,-!?'abcdeAZ09")
    alphabet += list("éßİΣ一吾輩猫。ーカﾅ①ﬁＡ😀👍🏽\u0301")
    texts = ["".join(rng.choice(alphabet, int(rng.integers(0, 120)))) for _ in range(600)]
    for model in MODELS[1:]:
        tokenizer, processor = SentencePieceTokenizer(assets(model)), reference(assets, model)
        assert_same_ids(tokenizer, processor, texts)
        assert_same_offsets(tokenizer, processor, texts)
