"""A run directory is never half-written: reruns with another config or tokenizer are refused before
anything is written, files are installed by rename, and what a killed run left is cleaned up."""

import os

import pytest

from tfbert.cli import main
from tfbert.config import load_config
from tfbert.text.vocab_training import train_wordpiece
from tfbert.training.pretraining_config import config_for_tokenizer
from tfbert.training.run_assets import TEMPORARY_MARK, RunMismatch, remove_interrupted_writes, save_run_assets


def files_with_bytes_and_times(folder):
    """Every file under `folder`: its bytes and modification time."""
    found = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as file:
                found[os.path.relpath(path, folder)] = (file.read(), os.stat(path).st_mtime_ns)
    return found


@pytest.fixture(scope="module")
def run_folder(assets, tmp_path_factory):
    """A corpus, two WordPiece vocabularies, and a run folder holding bert_tiny's assets for the first one."""
    folder = tmp_path_factory.mktemp("rerun")
    lines = assets("text/botchan.txt").read_text(encoding="utf-8").splitlines()[:60]
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(line for index, line in enumerate(lines) for line in [line] + [""] * (index % 5 == 4)))
    tokenizer = train_wordpiece(str(corpus), 200, folder / "vocab")
    train_wordpiece(str(corpus), 150, folder / "other_vocab")
    config = config_for_tokenizer(load_config("bert_tiny"), tokenizer)
    save_run_assets(config, tokenizer, str(folder / "run"), sequence_length=32, max_predictions=4)
    (folder / "run" / "checkpoint").write_text('model_checkpoint_path: "ckpt-2"\n')   # a run that has trained
    return folder, config, tokenizer


@pytest.mark.parametrize("config, tokenizer, expected", [
    ("albert_tiny", "vocab", "holds a run with another config (architecture: 'bert' here, 'albert' now)"),
    ("bert_tiny", "other_vocab", "holds a run with another tokenizer (tokenizer/: vocab.txt differs)"),
], ids=["config", "tokenizer"])
def test_rerun_with_another_config_or_tokenizer_is_refused_before_anything_is_written(run_folder, capsys, config,
                                                                                       tokenizer, expected):
    folder, _, _ = run_folder
    before = files_with_bytes_and_times(folder / "run")
    code = main(["pretrain", "--config", config, "--tokenizer", str(folder / tokenizer), "--data",
                 str(folder / "corpus.txt"), "--model-dir", str(folder / "run"), "--steps", "2",
                 "--sequence-length", "32", "--max-predictions", "4"])
    error = capsys.readouterr().err.strip()
    assert code == 2 and error.startswith("tfbert pretrain: error: ") and "\n" not in error
    assert expected in error and "nothing was changed" in error
    assert files_with_bytes_and_times(folder / "run") == before


def test_same_assets_again_rewrite_nothing_and_leave_no_temporary_file(run_folder):
    folder, config, tokenizer = run_folder
    before = files_with_bytes_and_times(folder / "run")
    save_run_assets(config, tokenizer, str(folder / "run"), sequence_length=32, max_predictions=4)
    assert files_with_bytes_and_times(folder / "run") == before
    with pytest.raises(RunMismatch, match="another config"):
        save_run_assets(config.replace(encoder=config.encoder.replace(num_layers=3)), tokenizer, str(folder / "run"))
    assert files_with_bytes_and_times(folder / "run") == before
    # Another sequence length (BERT's 128-then-512 phases) only rewrites preprocessor.json and the manifest that
    # records it, by rename.
    save_run_assets(config, tokenizer, str(folder / "run"), sequence_length=64, max_predictions=4)
    after = files_with_bytes_and_times(folder / "run")
    rewritten = ("preprocessor.json", "tfbert.json")
    assert all(b'"sequence_length": 64' in after[name][0] for name in rewritten)
    assert {name: after[name] for name in after if name not in rewritten} == \
        {name: before[name] for name in before if name not in rewritten}
    assert not [name for name in os.listdir(folder / "run") if TEMPORARY_MARK in name]


def test_leftovers_of_a_killed_run_are_removed(tmp_path):
    (tmp_path / "ckpt-40_temp").mkdir()
    (tmp_path / "ckpt-40_temp" / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"\0" * 10)
    (tmp_path / f"{TEMPORARY_MARK}123-config.yaml").write_text("architecture: bert\n")
    (tmp_path / "encoder").mkdir()
    (tmp_path / "encoder" / f"{TEMPORARY_MARK}123-encoder.keras").write_bytes(b"PK\3\4")
    (tmp_path / "encoder" / "encoder.keras").write_bytes(b"")
    (tmp_path / "ckpt-20.index").write_bytes(b"kept")
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "ckpt-20"\nall_model_checkpoint_paths: "ckpt-20"\n')
    removed = remove_interrupted_writes(str(tmp_path))
    assert len(removed) == 4
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-20.index", "encoder"]
    assert os.listdir(tmp_path / "encoder") == []


def write_checkpoints(folder, steps):
    """Real checkpoints `ckpt-STEP` of one variable in `folder`, the `checkpoint` index naming the last three."""
    import tensorflow as tf

    state = tf.train.Checkpoint(value=tf.Variable(1.0))
    manager = tf.train.CheckpointManager(state, str(folder), max_to_keep=3, checkpoint_name="ckpt")
    for step in steps:
        manager.save(checkpoint_number=step)


def test_checkpoint_files_the_index_does_not_list_are_removed_and_the_listed_ones_kept(tmp_path):
    # A SIGKILL between a checkpoint's files and the `checkpoint` index (or in the middle of either) left files that
    # no later start removed.
    import shutil

    import tensorflow as tf

    write_checkpoints(tmp_path, [2, 4])
    listed = sorted(os.listdir(tmp_path))
    for name in os.listdir(tmp_path):   # ckpt-6 written whole, killed before the index named it
        if name.startswith("ckpt-4."):
            shutil.copyfile(tmp_path / name, tmp_path / name.replace("ckpt-4", "ckpt-6"))
    (tmp_path / "ckpt-8_temp").mkdir()   # killed while TensorFlow wrote its shards
    (tmp_path / "ckpt-8_temp" / "part-00000-of-00001.data-00000-of-00001.tempstate123").write_bytes(b"\0")
    (tmp_path / "ckpt-8.index.tempstate456").write_bytes(b"\0")   # killed before its rename
    (tmp_path / "checkpoint.tmp0123abcd").write_text("model_checkpoint_path: ")   # the index, killed in its write
    removed = remove_interrupted_writes(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == listed and len(removed) == 5
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-4")


def test_checkpoint_files_without_an_index_are_removed_but_kept_when_the_index_is_unreadable(tmp_path):
    write_checkpoints(tmp_path, [2])
    (tmp_path / "checkpoint").write_text("not a checkpoint index {")
    assert remove_interrupted_writes(str(tmp_path)) == []   # which files it lists is unknown: nothing is guessed
    os.remove(tmp_path / "checkpoint")   # killed before the first index: no complete checkpoint
    assert len(remove_interrupted_writes(str(tmp_path))) == 2 and os.listdir(tmp_path) == []


def test_assets_go_to_a_bucket_by_copy_and_are_compared_there_too(run_folder):
    import tensorflow as tf

    _, config, tokenizer = run_folder
    save_run_assets(config, tokenizer, "ram://bucket/run", sequence_length=32)
    with tf.io.gfile.GFile("ram://bucket/run/checkpoint", "w") as index:
        index.write('model_checkpoint_path: "ckpt-2"\n')
    assert tf.io.gfile.exists("ram://bucket/run/config.yaml")
    assert tf.io.gfile.exists("ram://bucket/run/tokenizer/vocab.txt")
    with pytest.raises(RunMismatch, match="another config"):
        save_run_assets(config.replace(encoder=config.encoder.replace(num_layers=3)), tokenizer, "ram://bucket/run")


def test_disk_full_during_a_run_is_one_line_naming_the_last_complete_checkpoint(run_folder, tmp_path, capsys,
                                                                                monkeypatch):
    import tensorflow as tf

    import tfbert.training.pretraining

    folder, _, _ = run_folder
    run = tmp_path / "run"
    run.mkdir()
    (run / "ckpt-2.index").write_bytes(b"")
    (run / "checkpoint").write_text('model_checkpoint_path: "ckpt-2"\nall_model_checkpoint_paths: "ckpt-2"\n')

    def save_fails(*args, **kwargs):   # the checkpoint save of step 4 hits a full disk
        raise tf.errors.ResourceExhaustedError(None, None, f"{run}/ckpt-4_temp/part-00000-of-00001.data-00000-of-"
                                                           "00001.tempstate123; No space left on device")

    monkeypatch.setattr(tfbert.training.pretraining, "train", save_fails)
    code = main(["pretrain", "--config", "bert_tiny", "--tokenizer", str(folder / "vocab"), "--data",
                 str(folder / "corpus.txt"), "--model-dir", str(run), "--steps", "4", "--sequence-length", "32",
                 "--max-predictions", "4"])
    error = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in error
    assert error.startswith(f"tfbert pretrain: error: no space left on the disk of {run} (")
    assert f"the last complete checkpoint is {run}/ckpt-2 (step 2): free space and rerun the same command" in error


@pytest.mark.parametrize("error, expected", [
    ("tf_permission", "cannot write to runs/a: permission denied (runs/a/ckpt-4_temp; Read-only file system); "
                      "give a --model-dir you can write to"),
    ("read_only", "cannot write to runs/a: permission denied ([Errno 30] Read-only file system: 'runs/a/.tfbert.lock')"),
    ("enospc", "no space left on the disk of runs/a ([Errno 28] No space left on device); there is no complete "
               "checkpoint yet: free space and rerun the same command"),
    ("out_of_memory", "out of memory (OOM when allocating tensor with shape[32,128,30522]); give a smaller --batch-size"),
    ("file_too_large", "a file in runs/a outgrew the file-size limit, ulimit -f ([Errno 27] File too large: "
                       "'runs/a/ckpt-4_temp/part'); there is no complete checkpoint yet: raise the limit and rerun"),
])
def test_write_failures_and_out_of_memory_are_one_line(error, expected):
    import errno

    import tensorflow as tf

    from tfbert.training.write_failures import run_failure_message

    errors = {
        "tf_permission": tf.errors.PermissionDeniedError(None, None, "runs/a/ckpt-4_temp; Read-only file system"),
        "read_only": OSError(errno.EROFS, "Read-only file system", "runs/a/.tfbert.lock"),
        "enospc": OSError(errno.ENOSPC, "No space left on device"),
        "out_of_memory": tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor with "
                                                                      "shape[32,128,30522]\nmore"),
        "file_too_large": OSError(errno.EFBIG, "File too large", "runs/a/ckpt-4_temp/part"),
    }
    assert run_failure_message(errors[error], "runs/a").startswith(expected)
