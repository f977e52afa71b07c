"""BytePairTokenizer: ids equal GPT-2's encoding (tiktoken with the local gpt2.tiktoken ranks)."""

import numpy as np
import tensorflow as tf
from text_cases import HARD_STRINGS, as_text, batched

from tfbert.text import BytePairTokenizer


def assert_same_ids(tokenizer, encoding, texts):
    mismatches = []
    for batch in batched(texts, 2048):
        got = tokenizer.tokenize(tf.constant(batch)).to_list()
        expected = encoding.encode_ordinary_batch([as_text(t) if isinstance(t, bytes) else t for t in batch])
        mismatches += [(text, want, have) for text, want, have in zip(batch, expected, got) if want != have]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ, first: {mismatches[:3]}"


def test_real_text_exact(gpt2_bpe, tiktoken_gpt2, wiki_lines, botchan_lines, korean_lines):
    assert_same_ids(gpt2_bpe, tiktoken_gpt2, wiki_lines[:8000] + botchan_lines + korean_lines[:2000])


def test_hard_strings_exact(gpt2_bpe, tiktoken_gpt2):
    assert_same_ids(gpt2_bpe, tiktoken_gpt2, HARD_STRINGS)
    whitespace = [" \n x", "\n\n y", "a \t\n b", "x\u00a0 \u3000y", "  's", "   abc  ", "\n", " ", "x\n \n", "1 2  3   4"]
    assert_same_ids(gpt2_bpe, tiktoken_gpt2, whitespace + [w * 3 for w in whitespace])


def test_long_repetitive_words(gpt2_bpe, tiktoken_gpt2):
    texts = ["a" * 3000, "ab" * 1000, "x" + "=" * 500, "🤗" * 300, "ü" * 999]
    assert_same_ids(gpt2_bpe, tiktoken_gpt2, texts)


def test_offsets_tile_the_text(gpt2_bpe, wiki_lines):
    lines = wiki_lines[:2000]
    token_bytes = gpt2_bpe.detokenize(tf.range(gpt2_bpe.vocabulary_size())[:, None]).numpy().tolist()
    ids, starts, ends = gpt2_bpe.tokenize_with_offsets(tf.constant(lines))
    for line, row_ids, row_starts, row_ends in zip(lines, ids.to_list(), starts.to_list(), ends.to_list()):
        data = line.encode()
        assert row_starts[:1] in ([], [0]) and (not row_ends or row_ends[-1] == len(data))
        for token_id, start, end in zip(row_ids, row_starts, row_ends):
            assert token_bytes[token_id] == data[start:end]


def test_detokenize_round_trip(gpt2_bpe, botchan_lines):
    lines = botchan_lines[:300] + ["ünïcode 中文 😀 a\x00b"]
    ids = gpt2_bpe.tokenize(tf.constant(lines))
    assert gpt2_bpe.detokenize(ids).numpy().tolist() == [line.encode() for line in lines]


def test_special_tokens_and_lookups(gpt2_bpe):
    assert gpt2_bpe.vocabulary_size() == 50257
    assert gpt2_bpe.eos_id == gpt2_bpe.bos_id == 50256 and gpt2_bpe.pad_id is None and gpt2_bpe.mask_id is None
    assert gpt2_bpe.special_token_ids() == [50256]
    assert gpt2_bpe.id_to_token(995) == "Ġworld" and gpt2_bpe.token_to_id("Ġworld") == 995


def test_vocab_and_merges_files_round_trip(gpt2_bpe, tmp_path, tiktoken_gpt2, botchan_lines):
    gpt2_bpe.save_assets(tmp_path)
    roberta_roles = {"bos": "<|endoftext|>", "eos": "<|endoftext|>", "unk": None}
    loaded = BytePairTokenizer(tmp_path / "vocab.json", tmp_path / "merges.txt", special_tokens=roberta_roles)
    assert loaded.merges() == gpt2_bpe.merges()
    assert_same_ids(loaded, tiktoken_gpt2, botchan_lines[:500])
    reloaded = BytePairTokenizer.from_directory(tmp_path)
    assert reloaded.vocabulary() == gpt2_bpe.vocabulary()


def test_roberta_special_tokens(gpt2_bpe):
    vocabulary = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    vocabulary.update({token: index + 4 for index, token in enumerate(gpt2_bpe.vocabulary()[:50256])})
    vocabulary["<mask>"] = len(vocabulary)
    roberta = BytePairTokenizer(vocabulary, gpt2_bpe.merges())
    assert (roberta.cls_id, roberta.pad_id, roberta.sep_id, roberta.unk_id, roberta.mask_id) == (0, 1, 2, 3, 50260)
    assert roberta.bos_id == 0 and roberta.eos_id == 2
    assert roberta.tokenize("Hello world").numpy().tolist() == [15496 + 4, 995 + 4]


def test_bad_input_never_crashes(gpt2_bpe):
    rng = np.random.default_rng(2)
    blobs = [rng.integers(0, 256, size=int(n), dtype=np.uint8).tobytes() for n in rng.integers(0, 300, size=100)]
    ids = gpt2_bpe.tokenize(tf.constant(blobs))
    assert ids.shape[0] == 100 and int(tf.reduce_min(ids.flat_values)) >= 0
    assert gpt2_bpe.tokenize(tf.constant([], tf.string)).shape[0] == 0
    assert gpt2_bpe.tokenize("").numpy().tolist() == []
