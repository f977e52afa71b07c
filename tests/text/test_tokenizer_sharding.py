"""A batch cut into shards (run side by side on the cores) tokenizes exactly as the whole batch does."""

import pytest
import tensorflow as tf

from tfbert.text import BytePairTokenizer, SentencePieceTokenizer, WordPieceTokenizer
from tfbert.text._sharding import MIN_ROWS_PER_SHARD, _sharded, in_shards


def _texts(wiki_lines, korean_lines, botchan_lines):
    # Long and short rows, empty strings, Korean and invalid UTF-8 mixed in one batch.
    return wiki_lines[:60] + ["", " "] + korean_lines[:40] + botchan_lines[:60] + ["caf\xe9".encode("latin-1")]


def _tokenizers(assets):
    return {
        "wordpiece": lambda: WordPieceTokenizer(assets("minilm/vocab.txt")),
        "unigram": lambda: SentencePieceTokenizer(assets("spm/botchan_en_unigram_1000.model")),
        "sentencepiece_bpe": lambda: SentencePieceTokenizer(assets("spm/botchan_en_bpe_1000.model")),
        "byte_bpe": lambda: BytePairTokenizer.from_tiktoken(assets("bpe/gpt2.tiktoken")),
    }


def _outputs(tokenizer, shards, batches):
    """Ids and offsets of each batch, from functions traced once for any batch size."""
    tokenizer.shards = shards
    dynamic = [tf.TensorSpec([None], tf.string)]
    ids = tf.function(tokenizer.tokenize, input_signature=dynamic)
    with_offsets = tf.function(tokenizer.tokenize_with_offsets, input_signature=dynamic)
    return [[ids(batch).to_list()] + [part.to_list() for part in with_offsets(batch)] for batch in batches]


@pytest.mark.parametrize("kind", ["wordpiece", "unigram", "sentencepiece_bpe", "byte_bpe"])
def test_sharded_batches_equal_the_whole_batch(kind, assets, wiki_lines, korean_lines, botchan_lines):
    tokenizer = _tokenizers(assets)[kind]()
    texts = _texts(wiki_lines, korean_lines, botchan_lines)
    sizes = (len(texts), 5, 1, 0)
    batches = [tf.constant(texts[:size], tf.string, shape=[size]) for size in sizes]
    whole = _outputs(tokenizer, 1, batches)
    assert [len(outputs[0]) for outputs in whole] == list(sizes)
    assert _outputs(tokenizer, 3, batches) == whole


def shard_size_and_length(rows):
    """Per row: the size of the shard it was tokenized in, and its length."""
    size = tf.fill([tf.size(rows)], tf.size(rows))
    return tf.RaggedTensor.from_tensor(tf.stack([size, tf.strings.length(rows)], 1))


def test_shards_split_by_bytes_and_keep_row_order():
    strings = tf.constant(["a" * 90, "b", "c", "d" * 5, "e" * 100])
    sharded = tf.function(lambda s: _sharded(shard_size_and_length, s, 2), input_signature=[tf.TensorSpec([None], tf.string)])
    # 202 bytes (a byte more per row): the first shard ends where the rows reach half of them.
    assert sharded(strings).to_list() == [[4, 90], [4, 1], [4, 1], [4, 5], [1, 100]]


def test_small_batches_of_unknown_size_stay_whole_when_they_run():
    sharded = tf.function(lambda s: in_shards(shard_size_and_length, s, 2), input_signature=[tf.TensorSpec([None], tf.string)])
    small, large = 2 * MIN_ROWS_PER_SHARD - 1, 2 * MIN_ROWS_PER_SHARD
    assert {row[0] for row in sharded(tf.constant(["x"] * small)).to_list()} == {small}
    assert {row[0] for row in sharded(tf.constant(["x"] * large)).to_list()} == {MIN_ROWS_PER_SHARD}


def test_small_static_batches_stay_whole():
    def shard_size(rows):   # each row gets the size of the shard it was tokenized in
        size = tf.shape(rows)[0]
        return tf.RaggedTensor.from_tensor(tf.fill([size, 1], size))

    whole = in_shards(shard_size, tf.constant(["x"] * (2 * MIN_ROWS_PER_SHARD - 1)), 4)
    assert set(whole.flat_values.numpy()) == {2 * MIN_ROWS_PER_SHARD - 1}
    halves = in_shards(shard_size, tf.constant(["x"] * (2 * MIN_ROWS_PER_SHARD)), 4)
    assert halves.flat_values.numpy().tolist() == [MIN_ROWS_PER_SHARD] * (2 * MIN_ROWS_PER_SHARD)


def test_shards_share_one_traced_tokenizer():
    traces = []

    def tokenize(rows):
        traces.append(rows.shape)
        return tf.RaggedTensor.from_tensor(tf.strings.length(rows)[:, None])

    serve = tf.function(lambda rows: in_shards(tokenize, rows, 4), input_signature=[tf.TensorSpec([None], tf.string)])
    assert serve(tf.constant(["ab"] * 300)).flat_values.numpy().tolist() == [2] * 300
    assert len(traces) == 1


def test_a_tokenizer_shards_over_the_available_cores(assets):
    from tfbert.text._sharding import MAX_SHARDS, available_cores

    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"))
    assert tokenizer.shards == max(1, min(available_cores(), MAX_SHARDS))


@pytest.mark.parametrize("kind", ["wordpiece", "unigram", "byte_bpe"])
def test_eager_calls_trace_the_shards_once_and_equal_a_traced_call(kind, assets, wiki_lines):
    """Tokenizing eagerly again and again (an evaluation loop) reuses one traced function per method."""
    tokenizer = _tokenizers(assets)[kind]()
    tokenizer.shards = 2
    first, second = (tf.constant(wiki_lines[start:start + 2 * MIN_ROWS_PER_SHARD]) for start in (0, 70))
    eager = [tokenizer.tokenize(batch).to_list() for batch in (first, second, first)]
    offsets = [[part.to_list() for part in tokenizer.tokenize_with_offsets(batch)] for batch in (first, second)]
    traced = _outputs(tokenizer, 2, [first, second])
    assert eager == [traced[0][0], traced[1][0], traced[0][0]]
    assert offsets == [outputs[1:] for outputs in traced]
    functions = tokenizer._shard_functions
    assert len(functions) == 2 and all(function.experimental_get_tracing_count() == 1 for function in functions.values())


def test_every_trace_calls_the_one_traced_shard_function(assets, wiki_lines):
    """Two signatures of an export (or two tf.data maps) share the tokenizer's ops instead of a copy each."""
    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"))
    tokenizer.shards = 2
    strings = tf.TensorSpec([None], tf.string)
    ids = tf.function(lambda texts: tokenizer.tokenize(texts), input_signature=[strings]).get_concrete_function()
    lengths = tf.function(lambda texts: tokenizer.tokenize(texts).row_lengths(),
                          input_signature=[strings]).get_concrete_function()
    (shard_function,) = tokenizer._shard_functions.values()
    assert shard_function.experimental_get_tracing_count() == 1
    concrete = shard_function.get_concrete_function()
    assert concrete.function_def.attr["_noinline"].b   # optimized once, not once per call site
    name = concrete.name.decode()
    for signature in (ids, lengths):
        assert name in {function.signature.name for function in signature.graph.as_graph_def().library.function}
    batch = tf.constant(wiki_lines[:2 * MIN_ROWS_PER_SHARD])
    assert ids(batch).to_list() == tokenizer.tokenize(batch).to_list()
    assert lengths(batch).numpy().tolist() == [len(row) for row in ids(batch).to_list()]


def test_a_tokenizer_checkpoint_holds_no_vocabulary_list_or_eager_functions(assets):
    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"))
    tokenizer.tokenize(tf.constant(["x"] * 2 * MIN_ROWS_PER_SHARD))
    children = tokenizer._trackable_children(save_type="savedmodel")
    assert not {"_tokens", "_token_index", "_shard_functions"} & set(children)
    assert tokenizer.vocabulary()[:3] == ["[PAD]", "[unused0]", "[unused1]"]
