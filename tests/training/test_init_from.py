"""`pretrain --init-from SOURCE` and `--objectives`: each SOURCE kind, the heads kept or created, the resize."""

import itertools
import json
import shutil

import keras
import numpy as np
import pytest
import torch
import transformers
from sentencepiece import sentencepiece_model_pb2

import tfbert.corpus
from convert.tf1_releases import albert_tensors, padded_batch, write_checkpoint, write_json, write_vocab
from tfbert import architectures, artifacts
from tfbert.architectures import ArchitectureSpec
from tfbert.cli import main
from tfbert.config import load_config
from tfbert.models import Encoder
from tfbert.text import WordPieceTokenizer, load_tokenizer
from tfbert.text.vocab_training import train_sentencepiece
from tfbert.training.initialization import added_token_pieces, initialize_from, read_source
from tfbert.training.pretraining import pretrain
from tfbert.training.pretraining_config import load_run_config, run_config

from .tiny_recipes import tiny_electra

TOLERANCE = 1e-4
ALBERT = dict(embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
              max_position_embeddings=64, type_vocab_size=2)
BERT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
            max_position_embeddings=64, type_vocab_size=2)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Web text as documents of 20 sentences, with a SentencePiece vocabulary trained on it."""
    folder = tmp_path_factory.mktemp("init_from")
    lines = list(itertools.islice(tfbert.corpus.lines(), 600))
    text = folder / "web.txt"
    text.write_text("\n\n".join("\n".join(lines[i:i + 20]) for i in range(0, len(lines), 20)) + "\n")
    train_sentencepiece(str(text), 400, folder / "spm", lowercase=True)
    return folder


def tiny(name, **sizes):
    config = load_config(name)
    return config.replace(encoder=config.encoder.replace(hidden_size=32, num_heads=2, intermediate_size=64,
                                                         num_layers=2, max_positions=64, **sizes))


def short_run(config, tokenizer, corpus, model_dir, **kwargs):
    return pretrain(config, tokenizer=tokenizer, data=[str(corpus / "web.txt")], model_dir=str(model_dir), steps=2,
                    global_batch_size=2, strategy="cpu", sequence_length=32, max_predictions=5, seed=0, verbose=0,
                    checkpoint_every=2, jit_compile=False, **kwargs)


@pytest.fixture(scope="module")
def albert_mlm_run(corpus, tmp_path_factory):
    """A run of ALBERT with MLM only: the objectives a config may pick, no subclass."""
    run = tmp_path_factory.mktemp("albert_mlm") / "run"
    model = short_run(tiny("albert_tiny", embedding_size=16), corpus / "spm", corpus, run, objectives="mlm")
    return run, model


def outputs(model, vocab_size, seed=0):
    inputs, positions = padded_batch(vocab_size, seed=seed)
    return model({**inputs, "masked_positions": positions}, training=False)


def test_objectives_are_chosen_among_the_architectures_sets():
    albert = architectures.get("albert")
    assert albert.objectives_named("mlm") == ("mlm",)
    assert albert.objectives_named("sop, mlm") == ("mlm", "sop")
    assert architectures.get("electra").objectives_named("rtd") == ("mlm", "rtd")
    with pytest.raises(ValueError, match=r"cannot train objectives mlm,nsp; choose one of: mlm \| mlm,sop"):
        albert.objectives_named("mlm,nsp")


def test_albert_with_mlm_only_trains_no_pair_head_and_records_it(albert_mlm_run):
    run, model = albert_mlm_run
    assert model.objectives == ("mlm",) and model.pair_objective is None
    assert set(model.get_metrics_result()) >= {"mlm_loss"} and "sop_loss" not in model.get_metrics_result()
    assert load_config(run / "config.yaml").pretraining.objectives == "mlm"


def test_run_folder_source_keeps_the_mlm_head_and_creates_the_sop_head(albert_mlm_run):
    run, trained = albert_mlm_run
    source = read_source(run)
    assert source.kind == "run" and source.tokenizer.vocabulary_size() == 400
    model = source.spec.build_pretraining_model(source.config, ("mlm", "sop"))
    done = initialize_from(model, source)
    assert done.kept == ["encoder", "mlm_head"] and done.created == ["sop_head"]
    np.testing.assert_array_equal(outputs(model, 400)["mlm_logits"], outputs(trained, 400)["mlm_logits"])


def test_keras_file_and_finetune_dir_sources_start_from_their_encoder(albert_mlm_run, tmp_path):
    run, trained = albert_mlm_run
    encoder_file = run / "encoder" / "encoder.keras"
    finetuned = tmp_path / "finetuned"
    finetuned.mkdir()
    shutil.copy(encoder_file, finetuned / "best.keras")
    (finetuned / "task.json").write_text(json.dumps({"task": "classification"}))
    shutil.copy(run / "preprocessor.json", finetuned / "preprocessor.json")
    shutil.copytree(run / "tokenizer", finetuned / "tokenizer")
    for path, kind in ((encoder_file, "keras"), (finetuned, "finetune")):
        source = read_source(path)
        assert (source.kind, source.config.architecture) == (kind, "albert")
        model = source.spec.build_pretraining_model(source.config, ("mlm",))
        assert initialize_from(model, source).created == ["mlm_head"]
        inputs, _ = padded_batch(400)
        np.testing.assert_array_equal(model.encoder(inputs)["sequence_output"],
                                      trained.encoder(inputs)["sequence_output"])
    shutil.copy(encoder_file, tmp_path / "bare.keras")
    assert read_source(tmp_path / "bare.keras").config.architecture == "albert"   # the .keras file records it
    anonymous = keras.models.load_model(encoder_file)
    anonymous.architecture = None
    anonymous.save(tmp_path / "anonymous.keras")
    bare = read_source(tmp_path / "anonymous.keras")
    assert bare.config is None and bare.vocab_size == 400
    with pytest.raises(ValueError, match="says its architecture; give --config"):
        run_config(None, load_tokenizer(run / "tokenizer"), bare)


def test_hugging_face_albert_for_pretraining_keeps_mlm_and_sop_heads(tmp_path, assets):
    torch.manual_seed(0)
    reference = transformers.AlbertForPreTraining(transformers.AlbertConfig(vocab_size=1000, **ALBERT)).eval()
    reference.save_pretrained(tmp_path / "hf")
    shutil.copy(assets("spm/botchan_en_unigram_1000.model"), tmp_path / "hf" / "spiece.model")
    source = read_source(tmp_path / "hf")
    assert source.kind == "huggingface" and source.tokenizer.vocabulary_size() == 1000
    model = source.spec.build_pretraining_model(source.config, ("mlm", "sop"))
    assert initialize_from(model, source).kept == ["encoder", "mlm_head", "sop_head"]
    inputs, positions = padded_batch(1000)
    ours = model({**inputs, "masked_positions": positions}, training=False)
    with torch.no_grad():
        theirs = reference(input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
                           token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
                           attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long))
    at = np.take_along_axis(theirs.prediction_logits.numpy(), positions[:, :, None].astype(np.int64), axis=1)
    np.testing.assert_allclose(ours["mlm_logits"], at, atol=TOLERANCE, rtol=0)
    np.testing.assert_allclose(ours["sop_logits"], theirs.sop_logits.numpy(), atol=TOLERANCE, rtol=0)


def pretraining_models_built(monkeypatch) -> list:
    """The objective sets of the pretraining models built from now on."""
    built, build = [], ArchitectureSpec.build_pretraining_model
    monkeypatch.setattr(ArchitectureSpec, "build_pretraining_model",
                        lambda spec, config, objectives=None, **kw: built.append(objectives) or build(spec, config,
                                                                                                     objectives, **kw))
    return built


def test_hugging_face_bert_encoder_alone_gets_new_heads_from_one_model_built(tmp_path, monkeypatch):
    torch.manual_seed(1)
    reference = transformers.BertModel(transformers.BertConfig(vocab_size=300, **BERT)).eval()
    reference.save_pretrained(tmp_path / "hf")
    write_vocab(tmp_path / "hf" / "vocab.txt", 300)
    built = pretraining_models_built(monkeypatch)
    source = read_source(tmp_path / "hf")
    assert isinstance(source.model, Encoder)
    assert len(built) == 1   # the checkpoint holds nothing beside the encoder: no smaller set of heads is tried
    inputs, _ = padded_batch(300)
    with torch.no_grad():
        theirs = reference(input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
                           token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
                           attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long))
    np.testing.assert_allclose(source.model(inputs)["sequence_output"], theirs.last_hidden_state.numpy(),
                               atol=TOLERANCE, rtol=0)
    model = source.spec.build_pretraining_model(source.config, ("mlm", "nsp"))
    assert initialize_from(model, source).created == ["mlm_head", "nsp_head"]


def test_hugging_face_bert_for_masked_lm_keeps_its_mlm_head(tmp_path, monkeypatch):
    torch.manual_seed(3)
    transformers.BertForMaskedLM(transformers.BertConfig(vocab_size=300, **BERT)).save_pretrained(tmp_path / "hf")
    write_vocab(tmp_path / "hf" / "vocab.txt", 300)
    built = pretraining_models_built(monkeypatch)
    source = read_source(tmp_path / "hf")
    assert not isinstance(source.model, Encoder)
    assert [set(objectives) for objectives in built] == [{"mlm", "nsp"}, {"mlm"}]
    model = source.spec.build_pretraining_model(source.config, ("mlm", "nsp"))
    result = initialize_from(model, source)
    assert (result.kept, result.created) == (["encoder", "mlm_head"], ["nsp_head"])


def test_tf1_albert_release_keeps_its_heads(tmp_path, assets):
    torch.manual_seed(2)
    reference = transformers.AlbertForPreTraining(transformers.AlbertConfig(vocab_size=1000, **ALBERT)).eval()
    folder = tmp_path / "albert_base"
    folder.mkdir()
    write_checkpoint(folder / "model.ckpt-best", albert_tensors(reference, 1, 1))
    write_json(folder / "albert_config.json", {**ALBERT, "vocab_size": 1000, "hidden_act": "gelu"})
    shutil.copy(assets("spm/botchan_en_unigram_1000.model"), folder / "30k-clean.model")
    source = read_source(folder)
    assert source.kind == "tf1" and source.tokenizer is not None
    model = source.spec.build_pretraining_model(source.config, ("mlm",))
    assert initialize_from(model, source).kept == ["encoder", "mlm_head"]
    np.testing.assert_array_equal(outputs(model, 1000)["mlm_logits"], outputs(source.model, 1000)["mlm_logits"])


def with_user_pieces(tokenizer_dir, words, output):
    """A copy of a SentencePiece tokenizer folder with `words` appended as user-defined pieces."""
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString((tokenizer_dir / "spiece.model").read_bytes())
    for word in words:
        proto.pieces.add(piece=word, score=0.0, type=sentencepiece_model_pb2.ModelProto.SentencePiece.USER_DEFINED)
    shutil.copytree(tokenizer_dir, output)
    (output / "spiece.model").write_bytes(proto.SerializeToString())
    return load_tokenizer(output)


def test_a_tokenizer_with_added_words_grows_the_table_from_their_old_pieces(albert_mlm_run, tmp_path):
    run, trained = albert_mlm_run
    new = with_user_pieces(run / "tokenizer", ["\u2581unbelievablyweird", "tokenizerword"], tmp_path / "new")
    source = read_source(run)
    pieces = added_token_pieces(source, new)
    assert sorted(pieces) == [400, 401] and all(len(ids) > 1 for ids in pieces.values())
    assert new.tokenize(["unbelievablyweird"]).to_list() == [[400]]
    config = source.config.replace(encoder=source.config.encoder.replace(vocab_size=402))
    model = source.spec.build_pretraining_model(config, ("mlm",))
    initialize_from(model, source, pieces)
    old_table = trained.encoder.token_embedding.embeddings.numpy()
    table = model.encoder.token_embedding.embeddings.numpy()
    np.testing.assert_array_equal(table[:400], old_table)
    for new_id, ids in pieces.items():
        np.testing.assert_allclose(table[new_id], old_table[ids].mean(axis=0), rtol=1e-6)
    old_bias = trained.get_layer("mlm_head").output_bias.numpy()
    bias = model.get_layer("mlm_head").output_bias.numpy()
    np.testing.assert_array_equal(bias[:400], old_bias)
    np.testing.assert_allclose(bias[400], old_bias[pieces[400]].mean(), rtol=1e-6)
    write_vocab(tmp_path / "vocab.txt", 250)
    with pytest.raises(ValueError, match="250 tokens .* 400 rows"):
        added_token_pieces(source, WordPieceTokenizer(tmp_path / "vocab.txt"))


def test_config_vocab_size_comes_from_the_tokenizer_and_albert_shares_all_layers(tmp_path):
    config_file = tmp_path / "my_albert.yaml"
    config_file.write_text("architecture: albert\nencoder:\n  hidden_size: 64\n  num_heads: 2\n  num_layers: 4\n")
    config = load_config(config_file, vocab_size=321)
    assert (config.encoder.vocab_size, config.encoder.sharing) == (321, "all")
    config_file.write_text("architecture: albert\nencoder:\n  vocab_size: 300\n")
    with pytest.raises(ValueError, match="vocab_size is 300 but the tokenizer has 321 tokens"):
        load_config(config_file, vocab_size=321)
    assert load_config("albert_tiny", vocab_size=321).encoder.vocab_size == 321
    transformers.AlbertConfig(vocab_size=1000, **ALBERT).save_pretrained(tmp_path / "hf")
    from_json = load_run_config(tmp_path / "hf" / "config.json", vocab_size=321)
    assert (from_json.architecture, from_json.encoder.vocab_size, from_json.encoder.embedding_size) == ("albert", 321, 16)


def test_command_line_init_from_objectives_and_bad_sources(albert_mlm_run, corpus, tmp_path, capsys):
    run, _ = albert_mlm_run
    common = ["--data", str(corpus / "web.txt"), "--steps", "2", "--batch-size", "2", "--sequence-length", "32",
              "--checkpoint-every", "2", "--strategy", "cpu"]
    before = {path: path.read_bytes() for path in run.rglob("*") if path.is_file()}
    assert main(["pretrain", "--init-from", str(run), "--objectives", "mlm,sop", "--model-dir", str(tmp_path / "b"),
                 *common]) == 0
    assert {path: path.read_bytes() for path in run.rglob("*") if path.is_file()} == before
    printed = capsys.readouterr().out
    assert f"initialized from run {run}: kept encoder, mlm_head; created (new weights): sop_head" in printed
    assert load_config(tmp_path / "b" / "config.yaml").pretraining.objectives == "mlm,sop"
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("hello")
    for arguments, message in (
            (["--init-from", str(tmp_path / "junk")], "is none of the accepted kinds: a Hugging Face folder"),
            (["--init-from", str(run), "--objectives", "mlm,nsp"], "choose one of: mlm | mlm,sop"),
            (["--config", str(run / "encoder" / "encoder.keras"), "--tokenizer", str(run / "tokenizer")],
             "is a Keras model, not a config"),
            (["--init-from", str(run), "--model-dir", str(run)], "is the --init-from folder")):
        model_dir = [] if "--model-dir" in arguments else ["--model-dir", str(tmp_path / "c")]
        assert main(["pretrain", *arguments, *model_dir, *common]) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and message in error[0], error


def test_finetune_grows_the_encoder_for_a_tokenizer_with_added_words(albert_mlm_run, tmp_path):
    run, trained = albert_mlm_run
    source = artifacts.open(run)
    assert source.with_tokenizer(load_tokenizer(run / "tokenizer"), tmp_path) is source
    new = with_user_pieces(run / "tokenizer", ["\u2581unbelievablyweird"], tmp_path / "new")
    grown = keras.models.load_model(source.with_tokenizer(new, tmp_path).model_file)
    table, old_table = grown.token_embedding.embeddings.numpy(), trained.encoder.token_embedding.embeddings.numpy()
    np.testing.assert_array_equal(table[:400], old_table)
    pieces = added_token_pieces(read_source(run), new)
    np.testing.assert_allclose(table[400], old_table[pieces[400]].mean(axis=0), rtol=1e-6)


def test_electra_keras_file_keeps_its_generator_and_both_heads(tmp_path):
    config = tiny_electra(hidden=32, layers=1, heads=2, embedding=32)
    config = config.replace(encoder=config.encoder.replace(vocab_size=99),
                            generator=config.generator.replace(vocab_size=99))
    spec = architectures.get("electra")
    saved = spec.build_pretraining_model(config, spec.objectives_named("rtd"), seed=0)
    saved.save(tmp_path / "electra.keras")
    source = read_source(tmp_path / "electra.keras")
    model = spec.build_pretraining_model(source.config, ("mlm", "rtd"), seed=1)
    done = initialize_from(model, source)
    assert (done.kept, done.created) == (["encoder", "generator", "generator_head", "discriminator_head"], [])
    for old, new in zip(saved.trainable_weights, model.trainable_weights):
        np.testing.assert_array_equal(new.numpy(), old.numpy())
