"""The pipeline with the project's own tokenizers (tfbert.text) instead of the test helper."""

import numpy as np
import tensorflow as tf

import tfbert.data as data
import tfbert.text


def test_wordpiece_tokenizer_end_to_end(assets, lee_documents_path):
    tokenizer = tfbert.text.WordPieceTokenizer(str(assets("minilm/vocab.txt")), lowercase=True)
    packer = data.SegmentPacker(128, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id, style="bert")
    masker = data.MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=20, unit="whole_word",
                                              word_scheme="wordpiece")
    documents = data.text_line_documents(lee_documents_path, one_document_per_line=True)
    ds = data.pretraining_dataset(documents, tokenizer.tokenize, objective="nsp", packer=packer,
                                  masker=masker, batch_size=8, seed=0)
    batch = next(iter(ds.as_numpy_iterator()))
    assert batch["token_ids"].shape == (8, 128)
    assert (batch["token_ids"] == tokenizer.mask_id).sum() > 0
    assert not np.isin(batch["masked_ids"][batch["masked_weights"] > 0], tokenizer.special_token_ids()).any()


def test_sentencepiece_whole_word_masking(assets):
    tokenizer = tfbert.text.SentencePieceTokenizer(str(assets("spm/botchan_en_unigram_1000.model")))
    vocabulary = tokenizer.vocabulary()
    starts = data.word_start_flags(vocabulary, "sentencepiece")
    mask_id = vocabulary.index("<unk>")  # this small model has no mask piece; any special id works here
    masker = data.MaskedLMMasker(vocabulary_size=len(vocabulary), mask_id=mask_id,
                                 special_token_ids=list(tokenizer.special_token_ids()),
                                 max_predictions=40, unit="whole_word", word_starts=starts, selection_rate=0.3)
    ids = tokenizer.tokenize(tf.constant(["The schoolmaster was surprisingly unreasonable about the whole matter"] * 64))
    packer = data.SegmentPacker(48, tokenizer.cls_id, tokenizer.sep_id, 0, style="roberta")
    packed = packer([ids])
    out = masker(packed, seed=[3, 4])
    token_ids = packed["token_ids"].numpy()
    selected = np.zeros(token_ids.shape, bool)
    np.put_along_axis(selected, out["masked_positions"].numpy(), out["masked_weights"].numpy() > 0, axis=1)
    maskable = (packed["padding_mask"].numpy() == 1) & ~np.isin(token_ids, list(tokenizer.special_token_ids()))
    for row in range(token_ids.shape[0]):
        for position in range(1, token_ids.shape[1]):
            continues_word = maskable[row, position] and maskable[row, position - 1] and not starts[token_ids[row, position]]
            if continues_word:
                assert selected[row, position] == selected[row, position - 1]
    assert selected.any()
