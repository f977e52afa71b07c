"""Numerical parity with Hugging Face `transformers` (PyTorch, CPU) through the real checkpoint loader."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tfbert.convert.huggingface import load_huggingface  # noqa: E402

TOLERANCE = 1e-4


def _batch(vocab_size, seed=0, batch=3, length=12, predictions=4):
    """A batch with padding and two segments, plus masked positions inside the real tokens."""
    rng = np.random.default_rng(seed)
    lengths = [length, length - 3, 5]
    ids = rng.integers(5, vocab_size, size=(batch, length)).astype("int32")
    mask = np.zeros((batch, length), "int32")
    segments = np.zeros((batch, length), "int32")
    positions = np.zeros((batch, predictions), "int32")
    for row, n in enumerate(lengths):
        mask[row, :n] = 1
        segments[row, n // 2 : n] = 1
        ids[row, n:] = 0
        positions[row] = rng.choice(np.arange(1, n), size=predictions, replace=False)
    return ids, segments, mask, positions


def _tfbert_inputs(ids, segments, mask, positions=None):
    inputs = {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}
    if positions is not None:
        inputs["masked_positions"] = positions
    return inputs


def _close_on_real_tokens(ours, theirs, mask):
    keep = mask.astype(bool)
    np.testing.assert_allclose(np.asarray(ours)[keep], theirs[keep], atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize(
    "model_type,extra",
    [
        ("bert", {}),
        ("albert", {"embedding_size": 16, "num_hidden_groups": 1, "inner_group_num": 1}),
        ("albert", {"embedding_size": 16, "num_hidden_groups": 2, "inner_group_num": 2}),
    ],
    ids=["bert", "albert", "albert-2groups-2inner"],
)
def test_pretraining_model_matches_transformers(tmp_path, model_type, extra):
    torch.manual_seed(0)
    common = dict(
        vocab_size=99, hidden_size=32, num_hidden_layers=4, num_attention_heads=4, intermediate_size=37,
        max_position_embeddings=64, type_vocab_size=2,
    )
    if model_type == "bert":
        reference = transformers.BertForPreTraining(transformers.BertConfig(**common))
    else:
        reference = transformers.AlbertForPreTraining(transformers.AlbertConfig(**common, **extra))
    reference.eval()
    reference.save_pretrained(tmp_path)

    model = load_huggingface(tmp_path, heads=True)
    ids, segments, mask, positions = _batch(99)
    ours = model(_tfbert_inputs(ids, segments, mask, positions), training=False)
    encoded = model.encoder(_tfbert_inputs(ids, segments, mask), training=False)
    with torch.no_grad():
        theirs = reference(
            input_ids=torch.tensor(ids, dtype=torch.long),
            token_type_ids=torch.tensor(segments, dtype=torch.long),
            attention_mask=torch.tensor(mask, dtype=torch.long),
            output_hidden_states=True,
        )
        base = getattr(reference, model_type)(
            input_ids=torch.tensor(ids, dtype=torch.long),
            token_type_ids=torch.tensor(segments, dtype=torch.long),
            attention_mask=torch.tensor(mask, dtype=torch.long),
        )

    _close_on_real_tokens(encoded["sequence_output"], base.last_hidden_state.numpy(), mask)
    np.testing.assert_allclose(encoded["pooled_output"], base.pooler_output.numpy(), atol=TOLERANCE, rtol=0)
    # transformers records ALBERT's hidden states after every inner layer; tfbert after each outer layer.
    inner = extra.get("inner_group_num", 1)
    for layer, hidden in enumerate(theirs.hidden_states[inner::inner]):
        _close_on_real_tokens(encoded["encoder_outputs"][layer], hidden.numpy(), mask)
    mlm_reference = np.take_along_axis(theirs.prediction_logits.numpy(), positions[:, :, None].astype(np.int64), axis=1)
    np.testing.assert_allclose(ours["mlm_logits"], mlm_reference, atol=TOLERANCE, rtol=0)
    pair_name = "nsp_logits" if model_type == "bert" else "sop_logits"
    pair_reference = theirs.seq_relationship_logits if model_type == "bert" else theirs.sop_logits
    np.testing.assert_allclose(ours[pair_name], pair_reference.numpy(), atol=TOLERANCE, rtol=0)


def test_real_minilm_checkpoint_matches_transformers(assets):
    """all-MiniLM-L6-v2, a real pretrained BERT, on real sentences tokenized by its own tokenizer."""
    folder = assets("minilm/config.json").parent
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    reference = transformers.BertModel.from_pretrained(str(folder)).eval()
    sentences = [
        "The quick brown fox jumps over the lazy dog.",
        "TensorFlow Serving takes raw strings once preprocessing is part of the SavedModel.",
        "A man is playing a guitar on the street corner while people walk by.",
        "Ça marche très bien, merci !",
    ]
    batch = tokenizer(sentences, padding=True, return_tensors="np")
    encoder = load_huggingface(folder)
    ours = encoder(
        _tfbert_inputs(
            batch["input_ids"].astype("int32"),
            batch["token_type_ids"].astype("int32"),
            batch["attention_mask"].astype("int32"),
        ),
        training=False,
    )
    with torch.no_grad():
        theirs = reference(**{name: torch.tensor(value) for name, value in batch.items()})
    _close_on_real_tokens(ours["sequence_output"], theirs.last_hidden_state.numpy(), batch["attention_mask"])


def test_roberta_masked_lm_matches_transformers(tmp_path):
    """RoBERTa: positions after the padding id, one segment type, MLM head; the checkpoint has no pooler."""
    torch.manual_seed(0)
    config = transformers.RobertaConfig(
        vocab_size=99, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=37,
        max_position_embeddings=40, type_vocab_size=1, pad_token_id=1,
    )
    reference = transformers.RobertaForMaskedLM(config).eval()
    reference.save_pretrained(tmp_path)
    with pytest.warns(UserWarning, match="no pooler"):
        model = load_huggingface(tmp_path, heads=True)
    assert model.config.encoder.position_offset == 2

    ids, _, mask, positions = _batch(99, length=38)
    ids = np.where(mask == 1, np.maximum(ids, 3), 1).astype("int32")
    segments = np.zeros_like(ids)
    ours = model(_tfbert_inputs(ids, segments, mask, positions), training=False)
    encoded = model.encoder(_tfbert_inputs(ids, segments, mask), training=False)
    with torch.no_grad():
        theirs = reference(
            input_ids=torch.tensor(ids, dtype=torch.long),
            attention_mask=torch.tensor(mask, dtype=torch.long),
            output_hidden_states=True,
        )
    _close_on_real_tokens(encoded["sequence_output"], theirs.hidden_states[-1].numpy(), mask)
    mlm_reference = np.take_along_axis(theirs.logits.numpy(), positions[:, :, None].astype(np.int64), axis=1)
    np.testing.assert_allclose(ours["mlm_logits"], mlm_reference, atol=TOLERANCE, rtol=0)
