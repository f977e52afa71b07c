"""`tfbert convert to-huggingface`: what tfbert writes loads in `transformers` (and sentence-transformers) with
tfbert's outputs and ids, and a Hugging Face checkpoint read and written again is equal bit for bit."""

import json
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

from tfbert import architectures  # noqa: E402
from tfbert.config import EncoderConfig  # noqa: E402
from tfbert.convert.huggingface import load_huggingface  # noqa: E402
from tfbert.families.electra.checkpoints import load_electra  # noqa: E402
from tfbert.convert.to_huggingface import write_huggingface  # noqa: E402
from tfbert.models.encoder import Encoder  # noqa: E402

TOLERANCE = 1e-4
VOCAB = 99
SMALL = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
             max_position_embeddings=64)


def _hf_pretraining_models():
    """Tiny random `transformers` models with heads, one per family, as `save_pretrained` writes them."""
    electra = dict(SMALL, embedding_size=16)
    return {
        "bert": lambda: transformers.BertForPreTraining(transformers.BertConfig(**SMALL)),
        "albert": lambda: transformers.AlbertForPreTraining(transformers.AlbertConfig(
            **SMALL, embedding_size=16, num_hidden_groups=2, inner_group_num=2)),
        "roberta": lambda: transformers.RobertaForMaskedLM(transformers.RobertaConfig(**SMALL)),
        "xlmr": lambda: transformers.XLMRobertaForMaskedLM(transformers.XLMRobertaConfig(**SMALL)),
        "xlm": lambda: transformers.XLMWithLMHeadModel(transformers.XLMConfig(
            vocab_size=VOCAB, emb_dim=32, n_layers=2, n_heads=4, n_langs=3, max_position_embeddings=64)),
        "electra": lambda: (transformers.ElectraForPreTraining(transformers.ElectraConfig(**electra)),
                            transformers.ElectraForMaskedLM(transformers.ElectraConfig(
                                **dict(electra, hidden_size=8, num_attention_heads=2, intermediate_size=16)))),
        "deberta": lambda: transformers.DebertaV2ForMaskedLM(transformers.DebertaV2Config(
            **SMALL, relative_attention=True, pos_att_type=["p2c", "c2p"], position_biased_input=False,
            position_buckets=8, max_relative_positions=64, share_att_key=True, norm_rel_ebd="layer_norm")),
    }


def _save_reference(architecture, folder):
    torch.manual_seed(0)
    model = _hf_pretraining_models()[architecture]()
    if architecture != "electra":
        model.save_pretrained(folder)
        return [folder]
    discriminator, generator = model
    generator.electra.embeddings.load_state_dict(discriminator.electra.embeddings.state_dict())
    discriminator.save_pretrained(folder / "discriminator")
    generator.save_pretrained(folder / "generator")
    return [folder / "discriminator", folder / "generator"]


def _tensors(folder):
    return safetensors_numpy.load_file(str(folder / "model.safetensors"))


@pytest.mark.parametrize("architecture", ["bert", "albert", "roberta", "xlmr", "xlm", "electra", "deberta"])
def test_a_checkpoint_read_and_written_again_is_equal_bit_for_bit_and_loads_without_missing_weights(
        tmp_path, architecture):
    originals = _save_reference(architecture, tmp_path / "original")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = (load_electra(*originals) if architecture == "electra"
                 else load_huggingface(tmp_path / "original", heads=True))
    written = write_huggingface(model, tmp_path / "written", architecture)

    assert len(written) == len(originals)
    for original, folder in zip(originals, written):
        theirs, ours = _tensors(original), _tensors(folder)
        assert sorted(ours) == sorted(theirs)
        for name, tensor in theirs.items():
            assert ours[name].dtype == tensor.dtype and ours[name].tobytes() == tensor.tobytes(), name
        config = json.loads((folder / "config.json").read_text())
        class_name = config["architectures"][0]
        original_config = json.loads((original / "config.json").read_text())
        assert class_name == original_config["architectures"][0]
        assert config.get("causal", False) == original_config.get("causal", False)
        _, info = getattr(transformers, class_name).from_pretrained(folder, output_loading_info=True)
        assert not info["missing_keys"] and not info["unexpected_keys"]


def _encoder_config(architecture):
    spec = architectures.get(architecture)
    fields = dict(vocab_size=VOCAB, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=128,
                  max_positions=64, activation="gelu")
    if architecture in ("albert", "electra"):
        fields["embedding_size"] = 16
    return EncoderConfig(**spec.with_defaults(fields))


def _batch(seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, VOCAB, size=(2, 9)).astype("int32")
    mask = np.array([[1] * 9, [1] * 6 + [0] * 3], dtype="int32")
    segments = (np.arange(9)[None, :] >= 4).astype("int32") * mask
    return ids * mask, mask, segments


def _tfbert_inputs(encoder, ids, mask, segments):
    if encoder.config.type_vocab_size < 2:
        segments = np.zeros_like(segments)
    values = {"token_ids": ids, "padding_mask": mask, "segment_ids": segments}
    return {name: values[name] for name in encoder.input}


def _hf_inputs(architecture, ids, mask, segments):
    inputs = {"input_ids": torch.tensor(ids, dtype=torch.long), "attention_mask": torch.tensor(mask, dtype=torch.long)}
    if architectures.get(architecture).packing_style == "bert":  # one segment type (RoBERTa), or languages (XLM)
        inputs["token_type_ids"] = torch.tensor(segments, dtype=torch.long)
    return inputs


def _assert_close_on_tokens(ours, theirs, mask):
    keep = mask.astype(bool)
    np.testing.assert_allclose(np.asarray(ours)[keep], np.asarray(theirs)[keep], atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("architecture", ["bert", "albert", "roberta", "xlmr"])
def test_a_classifier_loads_as_sequence_classification_with_its_logits_and_labels(tmp_path, architecture):
    from tfbert.models.tasks.classification import SequenceClassifier

    model = SequenceClassifier(Encoder(_encoder_config(architecture), name="encoder"), num_classes=3)
    ids, mask, segments = _batch(1)
    ours = model(_tfbert_inputs(model.encoder, ids, mask, segments), training=False)["logits"]
    write_huggingface(model, tmp_path / "hf", architecture, label_names=["no", "maybe", "yes"])

    reference = transformers.AutoModelForSequenceClassification.from_pretrained(tmp_path / "hf").eval()
    assert reference.config.id2label == {0: "no", 1: "maybe", 2: "yes"}
    with torch.no_grad():
        theirs = reference(**_hf_inputs(architecture, ids, mask, segments)).logits.numpy()
    np.testing.assert_allclose(ours, theirs, atol=TOLERANCE, rtol=0)


def test_an_architecture_the_target_cannot_hold_is_one_clear_error_and_nothing_is_written(tmp_path):
    from tfbert.models.tasks.classification import SequenceClassifier

    model = SequenceClassifier(Encoder(_encoder_config("electra"), name="encoder"), num_classes=2)
    with pytest.raises(ValueError, match="ElectraForSequenceClassification has a classification head unlike"):
        write_huggingface(model, tmp_path / "hf", "electra")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_not_overwritten(tmp_path):
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="already exists"):
        write_huggingface(Encoder(_encoder_config("bert")), tmp_path / "hf", "bert")
    assert (tmp_path / "hf" / "notes.txt").read_text() == "mine"


def test_the_real_minilm_checkpoint_is_written_back_with_every_weight_bit_for_bit(assets, tmp_path):
    folder = assets("minilm/config.json").parent
    write_huggingface(load_huggingface(folder), tmp_path / "hf", "bert")
    theirs, ours = _tensors(folder), _tensors(tmp_path / "hf")
    # `embeddings.position_ids` is a buffer transformers recomputes (0, 1, 2, ...), not a weight.
    assert sorted(theirs) == sorted([*ours, "embeddings.position_ids"])
    assert all(ours[name].tobytes() == theirs[name].tobytes() for name in ours)


def _task_model(kind, encoder):
    from tfbert.models.tasks.multiple_choice import MultipleChoice
    from tfbert.models.tasks.question_answering import SpanExtractor
    from tfbert.models.tasks.tagging import TokenClassifier

    return {"tokens": lambda: TokenClassifier(encoder, num_tags=3), "span": lambda: SpanExtractor(encoder),
            "choice": lambda: MultipleChoice(encoder)}[kind]()


@pytest.mark.parametrize("kind, architecture", [("tokens", "bert"), ("tokens", "electra"), ("span", "roberta"),
                                                ("span", "xlm"), ("choice", "albert"), ("tokens", "deberta"),
                                                ("span", "deberta")])
def test_token_span_and_choice_heads_load_in_their_automodel_classes_with_their_outputs(tmp_path, kind, architecture):
    model = _task_model(kind, Encoder(_encoder_config(architecture), name="encoder"))
    ids, mask, segments = _batch(2)
    inputs = _tfbert_inputs(model.encoder, ids, mask, segments)
    hf_inputs = _hf_inputs(architecture, ids, mask, segments)
    if kind == "choice":  # two choices per example
        inputs = {name: np.stack([value, value[::-1]], axis=1) for name, value in inputs.items()}
        hf_inputs = {name: torch.stack([value, value.flip(0)], dim=1) for name, value in hf_inputs.items()}
    ours = model(inputs, training=False)
    write_huggingface(model, tmp_path / "hf", architecture, label_names=["O", "B", "I"])

    auto = {"tokens": transformers.AutoModelForTokenClassification, "span": transformers.AutoModelForQuestionAnswering,
            "choice": transformers.AutoModelForMultipleChoice}[kind]
    reference, info = auto.from_pretrained(tmp_path / "hf", output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    with torch.no_grad():
        theirs = reference.eval()(**hf_inputs)
    if kind == "tokens":
        assert reference.config.id2label == {0: "O", 1: "B", 2: "I"}
        _assert_close_on_tokens(ours["logits"], theirs.logits.numpy(), mask)
    elif kind == "span":
        _assert_close_on_tokens(ours["start_logits"], theirs.start_logits.numpy(), mask)
        _assert_close_on_tokens(ours["end_logits"], theirs.end_logits.numpy(), mask)
    else:
        np.testing.assert_allclose(ours["logits"], theirs.logits.numpy(), atol=TOLERANCE, rtol=0)


def test_the_command_asks_for_what_the_model_does_not_say_and_refuses_an_existing_folder(tmp_path, capsys):
    from tfbert.cli import main

    Encoder(_encoder_config("bert"), name="encoder").save(tmp_path / "encoder.keras")
    command = ["convert", "to-huggingface", str(tmp_path / "encoder.keras"), "-o", str(tmp_path / "hf")]
    assert main(command) == 2
    assert "pass --architecture" in capsys.readouterr().err
    assert not (tmp_path / "hf").exists()

    assert main([*command, "--architecture", "bert"]) == 0
    assert "BertModel" in capsys.readouterr().out
    assert main([*command, "--architecture", "bert"]) == 2
    error = capsys.readouterr().err.strip()
    assert "already exists" in error and len(error.splitlines()) == 1


def test_a_spanbert_pretraining_model_is_written_as_bert_for_masked_lm(tmp_path):
    from tfbert.config import ModelConfig
    from tfbert.families.spanbert.models import SpanBertPretrainingModel

    model = SpanBertPretrainingModel(ModelConfig(architecture="spanbert", encoder=_encoder_config("spanbert")))
    ids, mask, segments = _batch(3)
    hidden = model.encoder(_tfbert_inputs(model.encoder, ids, mask, segments), training=False)["sequence_output"]
    ours = np.asarray(model.get_layer("mlm_head")(hidden, training=False))
    write_huggingface(model, tmp_path / "hf", "spanbert")

    reference, info = transformers.AutoModelForMaskedLM.from_pretrained(tmp_path / "hf", output_loading_info=True)
    assert type(reference).__name__ == "BertForMaskedLM"
    assert not info["missing_keys"] and not info["unexpected_keys"]
    with torch.no_grad():
        theirs = reference.eval()(**_hf_inputs("spanbert", ids, mask, segments)).logits.numpy()
    _assert_close_on_tokens(ours, theirs, mask)
