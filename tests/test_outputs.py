"""What the commands write: an existing output is refused naming --overwrite (and replaced whole with it), one
writer per output, nothing left by a failure, and SIGINT / SIGTERM end a command in one line with 130 / 143."""

import os
import resource
import shutil
import signal
import subprocess
import sys

import pytest
from processes import signal_when, start_tfbert, write_tiny_run_inputs

from tfbert.cli import main
from tfbert.outputs import OutputExists, OutputRefused, new_output, run_folder


def snapshot(folder):
    """Every file and folder under `folder`, with each file's bytes."""
    found = {}
    for root, folders, files in os.walk(folder):
        for name in folders:
            found[os.path.relpath(os.path.join(root, name), folder)] = None
        for name in files:
            with open(os.path.join(root, name), "rb") as file:
                found[os.path.relpath(os.path.join(root, name), folder)] = file.read()
    return found


def one_error_line(capsys, command):
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"tfbert {command}: error: ") and "\n" not in error, error
    return error


@pytest.fixture(scope="module")
def tiny(assets, tmp_path_factory):
    """A corpus of 5-sentence documents, a 200-token WordPiece vocabulary, a one-layer BERT config and its
    encoder as a .keras file."""
    import keras

    from tfbert.config import load_config
    from tfbert.models.encoder import Encoder

    folder = write_tiny_run_inputs(tmp_path_factory.mktemp("outputs"), assets("text/botchan.txt"))
    keras.utils.set_random_seed(0)
    Encoder(load_config(folder / "tiny.yaml").encoder, name="encoder").save(folder / "encoder.keras")
    return folder


# --- tfbert.outputs -------------------------------------------------------------------------------------------


def test_new_output_refuses_an_existing_file_or_folder_and_replaces_it_whole_with_overwrite(tmp_path):
    (tmp_path / "vocab").mkdir()
    (tmp_path / "vocab" / "old.txt").write_text("old")
    (tmp_path / "silver.tsv").write_text("old")
    before = snapshot(tmp_path)
    for name in ("vocab", "silver.tsv"):
        with pytest.raises(OutputExists, match=f"--output {tmp_path / name} already exists .*--overwrite"):
            with new_output(tmp_path / name):
                raise AssertionError("never reached: refused before the block")
    assert snapshot(tmp_path) == before
    with new_output(tmp_path / "vocab", overwrite=True) as staging:
        os.mkdir(staging)
        (tmp_path / staging / "new.txt").write_text("new")
        assert os.listdir(tmp_path / "vocab") == ["old.txt"]   # untouched until the block ends
    with new_output(tmp_path / "silver.tsv", overwrite=True) as staging:
        open(staging, "w").write("new")
    assert snapshot(tmp_path) == {"vocab": None, "vocab/new.txt": b"new", "silver.tsv": b"new"}


def test_a_failed_or_interrupted_output_leaves_nothing_not_even_its_folders(tmp_path):
    from tfbert.interrupts import Interrupted

    (tmp_path / "kept.tsv").write_text("old")
    for error in (ValueError("bad data"), Interrupted(signal.SIGTERM)):
        with pytest.raises(type(error)):
            with new_output(tmp_path / "a" / "b" / "model_dir") as staging:
                os.mkdir(staging)
                (tmp_path / staging / "best.keras").write_text("half")
                raise error
        with pytest.raises(type(error)):
            with new_output(tmp_path / "kept.tsv", overwrite=True) as staging:
                open(staging, "w").write("half")
                raise error
        assert snapshot(tmp_path) == {"kept.tsv": b"old"}
    assert "nothing was written, rerun the same command" in error.detail


def test_a_signal_while_the_lock_is_taken_leaves_no_lock_file_and_no_folder(tmp_path, monkeypatch):
    import fcntl

    from tfbert import output_lock
    from tfbert.interrupts import Interrupted, signals_raise

    real_flock = fcntl.flock

    def signalled_flock(descriptor, operation):   # SIGTERM lands between the lock file's creation and its flock
        os.kill(os.getpid(), signal.SIGTERM)
        return real_flock(descriptor, operation)

    monkeypatch.setattr(output_lock.fcntl, "flock", signalled_flock)
    with signals_raise(), pytest.raises(Interrupted) as interrupted:
        with new_output(tmp_path / "a" / "vocab"):
            raise AssertionError("never reached: the signal ends the claim")
    assert interrupted.value.exit_status == 143 and "nothing was written" in interrupted.value.detail
    assert snapshot(tmp_path) == {}


def test_a_signal_in_a_finalizer_is_raised_once_it_returns_so_its_cleanup_is_whole():
    # TensorFlow's function deleters (`__del__`) cut short by the exception left state that crashed the process.
    from tfbert.interrupts import Interrupted, signals_raise

    cleaned = []

    class Resource:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)
            cleaned.extend(["first half", "second half"])

    with signals_raise(), pytest.raises(Interrupted) as interrupted:
        Resource()
        for _ in range(10**8):   # Python instructions, at one of which (a millisecond on) Interrupted comes
            pass
    assert cleaned == ["first half", "second half"] and interrupted.value.exit_status == 143


def test_the_program_ignores_signals_once_its_command_is_done_and_main_alone_restores_them(capsys):
    # A signal after the command (output in place, message printed) raised KeyboardInterrupt inside TensorFlow's
    # teardown at exit, which could end the process with SIGSEGV instead of its status: `program` ignores it.
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = [signal.getsignal(number) for number in signals]
    try:
        assert main(["configs", "--architecture", "xlm"]) == 0
        assert [signal.getsignal(number) for number in signals] == previous
        assert main(["configs", "--architecture", "xlm"], exiting=True) == 0
        assert [signal.getsignal(number) for number in signals] == [signal.SIG_IGN, signal.SIG_IGN]
    finally:
        for number, handler in zip(signals, previous):
            signal.signal(number, handler)
    assert capsys.readouterr().out.count("xlm_tiny") == 2


def test_overwrite_never_replaces_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path / "work")
    with pytest.raises(OutputRefused, match="holds the current or home folder"):
        with new_output(tmp_path, overwrite=True):
            pass
    assert (tmp_path / "work" / "notes.txt").read_text() == "mine"


def test_run_folder_resumes_its_own_run_and_undoes_one_that_made_no_checkpoint(tmp_path):
    run = tmp_path / "run"
    with pytest.raises(ValueError):
        with run_folder(run, "pretrain"):
            (run / "config.yaml").write_text("architecture: bert\n")
            raise ValueError("failed before the first checkpoint")
    assert os.listdir(tmp_path) == []
    with run_folder(run, "pretrain"):
        (run / "config.yaml").write_text("architecture: bert\n")
        (run / "checkpoint").write_text("ckpt-2")
    with pytest.raises(ValueError):
        with run_folder(run, "pretrain"):   # resumed: a failure keeps the run
            raise ValueError("failed later")
    assert sorted(os.listdir(run)) == ["checkpoint", "config.yaml"]
    with run_folder(run, "pretrain", overwrite=True):   # a new run, even over one of its own kind
        assert os.listdir(run) == []
        (run / "checkpoint").write_text("ckpt-1")
    assert os.listdir(tmp_path) == ["run"] and os.listdir(run) == ["checkpoint"]


def test_run_kind_reads_the_manifest_first_and_old_run_files_only_without_one(tmp_path):
    from tfbert.artifacts import write_manifest
    from tfbert.outputs import run_kind

    run, model_dir, old_run, old_model_dir = (tmp_path / name for name in ("run", "model", "old_run", "old_model"))
    write_manifest(run, "pretraining-run", family="bert")
    write_manifest(model_dir, "model-dir", family="bert")
    (model_dir / "config.yaml").write_text("architecture: bert\n")   # a run's file in a model dir decides nothing
    for folder in (old_run, old_model_dir):
        folder.mkdir()
        (folder / "checkpoint").write_text("ckpt-2")
    (old_model_dir / "task.json").write_text("{}")
    assert [run_kind(folder) for folder in (run, model_dir, old_run, old_model_dir)] == ["pretrain", None, "pretrain",
                                                                                          None]
    (run / "tfbert.json").write_text("not json")
    with pytest.raises(ValueError, match="tfbert.json: not valid JSON"):   # named, not taken for another folder
        run_kind(run)


def test_run_folder_overwrite_keeps_the_old_folder_until_the_new_run_has_a_checkpoint(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "task.json").write_text("{}")   # a finetune model dir, not a pretraining run
    with pytest.raises(OutputExists, match="not a tfbert pretrain run.*--overwrite"):
        with run_folder(run, "pretrain"):
            pass
    with pytest.raises(ValueError):
        with run_folder(run, "pretrain", overwrite=True):
            assert os.listdir(run) == []
            raise ValueError("failed before the first checkpoint")
    assert snapshot(tmp_path) == {"run": None, "run/task.json": b"{}"}
    with run_folder(run, "pretrain", overwrite=True):
        (run / "checkpoint").write_text("ckpt-1")
    assert snapshot(tmp_path) == {"run": None, "run/checkpoint": b"ckpt-1"}


def dead_pid() -> int:
    """The pid of a process that has ended (and been waited for)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_run_set_aside_by_a_killed_overwrite_comes_back_until_the_new_run_has_a_checkpoint(tmp_path, capsys):
    # The rerun without --overwrite resumed the killed new run's folder and deleted the old run set aside beside it.
    run = tmp_path / "run"

    def killed_overwrite(new_files):
        """The disk as a `kill -9` of an --overwrite run leaves it: the old run set aside, the new one's files."""
        aside = tmp_path / f".tfbert-tmp-{dead_pid()}-old-run"
        aside.mkdir()
        (aside / "checkpoint").write_text("ckpt-2")
        (aside / "notes.txt").write_text("the old run")
        run.mkdir()
        for name, text in new_files.items():
            (run / name).write_text(text)

    killed_overwrite({"config.yaml": "architecture: bert\n"})   # no checkpoint yet
    with run_folder(run, "pretrain"):
        assert snapshot(run) == {"checkpoint": b"ckpt-2", "notes.txt": b"the old run"}   # resumed: the old run
    assert "is back as it was" in capsys.readouterr().err
    assert snapshot(tmp_path) == {"run": None, "run/checkpoint": b"ckpt-2", "run/notes.txt": b"the old run"}
    shutil.rmtree(run)
    killed_overwrite({"checkpoint": "ckpt-1"})   # the new run has a checkpoint: the old one is done with
    with run_folder(run, "pretrain"):
        pass
    assert snapshot(tmp_path) == {"run": None, "run/checkpoint": b"ckpt-1"}


def test_an_output_set_aside_by_a_killed_writer_between_its_renames_comes_back(tmp_path):
    aside = tmp_path / f".tfbert-tmp-{dead_pid()}-old-silver.tsv"
    aside.write_text("old")
    (tmp_path / f".tfbert-tmp-{aside.name.split('-')[2]}-silver.tsv").write_text("new, not yet renamed")
    with pytest.raises(OutputExists):   # the old file is back, so it is refused as any existing output
        with new_output(tmp_path / "silver.tsv"):
            pass
    assert snapshot(tmp_path) == {"silver.tsv": b"old"}


def test_second_writer_of_an_output_is_refused_naming_the_first_and_a_killed_one_leaves_it_free(tmp_path):
    from tfbert.output_lock import OutputBusy, OutputLock

    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from tfbert.output_lock import OutputLock; "
                               "lock = OutputLock(sys.argv[1]).__enter__(); print('held', flush=True); "
                               "time.sleep(60)", str(tmp_path / "run")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputBusy, match=f"another tfbert process \\(pid {holder.pid}\\) is writing to "):
            with OutputLock(str(tmp_path / "run"), flag="--model-dir"):
                pass
    finally:
        holder.kill()
        holder.wait()
    with OutputLock(str(tmp_path / "run")):   # the kernel dropped the killed holder's lock
        pass
    assert os.listdir(tmp_path) == []


# --- every writer refuses an existing output, before anything is written ---------------------------------------

WRITERS = {
    "vocab": ["vocab", "--kind", "wordpiece", "--data", "{corpus}", "--vocab-size", "100", "--output", "{out}"],
    "vocab_add": ["vocab", "add", "{vocab}", "--tokens", "{corpus}", "--output", "{out}"],
    "pretrain": ["pretrain", "--config", "{tiny}", "--tokenizer", "{vocab}", "--data", "{corpus}", "--steps", "2",
                 "--sequence-length", "16", "--max-predictions", "2", "--model-dir", "{out}"],
    "finetune": ["finetune", "--pretrained", "{encoder}", "--train", "{corpus}", "--eval", "{corpus}",
                 "--model-dir", "{out}"],
    "distill": ["distill", "--teacher", "{encoder}", "--student", "{encoder}", "--parallel", "{corpus}",
                "--model-dir", "{out}"],
    "augment": ["augment", "--cross-encoder", "{encoder}", "--sentences", "{corpus}", "--pairs", "random",
                "--output", "{out}"],
    "export": ["export", "{encoder}", "--tokenizer", "{vocab}", "--name", "m", "--version", "1", "--output-dir",
               "{out_parent}"],
    "convert": ["convert", "huggingface", "{vocab}", "-o", "{out}"],
    "to_huggingface": ["convert", "to-huggingface", "{encoder}", "-o", "{out}"],
    "quickstart": ["quickstart", "--steps", "1", "--work-dir", "{out}"],
}


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_refuses_an_existing_output_in_one_line_naming_overwrite(tiny, tmp_path, capsys, writer):
    out = tmp_path / ("m/1" if writer == "export" else "model.keras" if writer == "convert" else "out")
    out.mkdir(parents=True)
    (out / "mine.txt").write_text("not a tfbert output")
    values = {"corpus": tiny / "corpus.txt", "vocab": tiny / "vocab", "tiny": tiny / "tiny.yaml",
              "encoder": tiny / "encoder.keras", "out": out, "out_parent": tmp_path}
    argv = [argument.format(**values) for argument in WRITERS[writer]]
    before, inputs = snapshot(tmp_path), snapshot(tiny)
    assert main(argv) == 2
    error = one_error_line(capsys, argv[0])
    assert "already exists" in error and "--overwrite" in error
    assert snapshot(tmp_path) == before and snapshot(tiny) == inputs


def test_vocab_and_vocab_add_with_overwrite_replace_the_folder_whole(tiny, tmp_path, capsys):
    out = tmp_path / "vocab"
    out.mkdir()
    (out / "mine.txt").write_text("old")
    corpus = str(tiny / "corpus.txt")
    assert main(["vocab", "--kind", "wordpiece", "--data", corpus, "--vocab-size", "150", "--output", str(out),
                 "--overwrite"]) == 0
    assert sorted(os.listdir(out)) == ["tfbert.json", "tokenizer_config.json", "vocab.txt"]
    assert len((out / "vocab.txt").read_text().splitlines()) == 150
    (tmp_path / "words.txt").write_text("zyzzyva\n")
    assert main(["vocab", "add", str(out), "--tokens", str(tmp_path / "words.txt"), "--output", str(out),
                 "--overwrite"]) == 0
    assert (out / "vocab.txt").read_text().splitlines()[-1] == "zyzzyva"
    assert sorted(os.listdir(tmp_path)) == ["vocab", "words.txt"]
    assert "with 151 tokens" in capsys.readouterr().out


def test_two_finetune_runs_on_one_model_dir_the_second_is_refused(tiny, tmp_path, capsys):
    run = tmp_path / "run"
    first = subprocess.Popen([sys.executable, "-c", "import sys, time; from tfbert.outputs import new_output; "
                              "claim = new_output(sys.argv[1], flag='--model-dir'); claim.__enter__(); "
                              "print('writing', flush=True); time.sleep(60)", str(run)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "writing"
        before = snapshot(tmp_path)
        assert main(["finetune", "--pretrained", str(tiny / "encoder.keras"), "--train", str(tiny / "corpus.txt"),
                     "--eval", str(tiny / "corpus.txt"), "--model-dir", str(run)]) == 2
        error = one_error_line(capsys, "finetune")
        assert f"another tfbert process (pid {first.pid}) is writing to {run}; wait for it to finish or give " \
               "another --model-dir" in error
        assert snapshot(tmp_path) == before
    finally:
        first.kill()
        first.wait()


def test_convert_locks_the_tokenizer_and_manifest_it_writes_beside_its_output(signal_inputs, tmp_path, capsys):
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from tfbert.output_lock import OutputLock; "
                               "lock = OutputLock(sys.argv[1]).__enter__(); print('held', flush=True); "
                               "time.sleep(60)", str(tmp_path / "tokenizer")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = snapshot(tmp_path)
        assert main(["convert", "huggingface", str(signal_inputs / "hf"), "-o", str(tmp_path / "model.keras")]) == 2
        assert f"another tfbert process (pid {holder.pid}) is writing to {tmp_path / 'tokenizer'}" in \
            one_error_line(capsys, "convert")
        assert snapshot(tmp_path) == before
    finally:
        holder.kill()
        holder.wait()


# --- a failed first run never blocks the corrected rerun -------------------------------------------------------


def pretrain_argv(tiny, run, *extra):
    return ["pretrain", "--config", str(tiny / "tiny.yaml"), "--tokenizer", str(tiny / "vocab"), "--data",
            str(tiny / "corpus.txt"), "--model-dir", str(run), "--batch-size", "2", "--sequence-length", "16",
            "--max-predictions", "2", "--shuffle-buffer", "0", "--strategy", "cpu", "--seed", "0", *extra]


@pytest.mark.slow
def test_pretrain_failing_after_its_assets_leaves_nothing_and_the_corrected_rerun_trains(tiny, tmp_path, capsys,
                                                                                        monkeypatch):
    import tfbert.training.pretraining

    real_train = tfbert.training.pretraining.train

    def fails(*args, **kwargs):   # as a bad flag found once the run's assets are written
        raise ValueError("the first run failed")

    run = tmp_path / "runs" / "a"
    monkeypatch.setattr(tfbert.training.pretraining, "train", fails)
    assert main(pretrain_argv(tiny, run, "--steps", "1", "--sequence-length", "12")) == 2
    assert "the first run failed" in one_error_line(capsys, "pretrain")
    assert os.listdir(tmp_path) == []
    monkeypatch.setattr(tfbert.training.pretraining, "train", real_train)
    assert main(pretrain_argv(tiny, run, "--steps", "1")) == 0
    assert "trained to step 1 of 1" in capsys.readouterr().out
    assert {"checkpoint", "config.yaml", "preprocessor.json", "tokenizer", "encoder"} <= set(os.listdir(run))


def test_assets_of_a_run_with_no_checkpoint_are_replaced_not_held_against_the_rerun(tiny, tmp_path):
    from tfbert.config import load_config
    from tfbert.text import load_tokenizer
    from tfbert.training.pretraining_config import config_for_tokenizer
    from tfbert.training.run_assets import RunMismatch, save_run_assets

    tokenizer = load_tokenizer(tiny / "vocab")
    config = config_for_tokenizer(load_config(tiny / "tiny.yaml"), tokenizer)
    other = config.replace(encoder=config.encoder.replace(num_layers=2))
    save_run_assets(config, tokenizer, str(tmp_path), sequence_length=16)   # as a SIGKILLed first run left them
    save_run_assets(other, tokenizer, str(tmp_path), sequence_length=16)
    assert "num_layers: 2" in (tmp_path / "config.yaml").read_text()
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "ckpt-1"\n')
    with pytest.raises(RunMismatch, match="another config .*--overwrite"):
        save_run_assets(config, tokenizer, str(tmp_path), sequence_length=16)


def limited_file_size(bytes_: int):
    """As `ulimit -f`: in this process, writes past `bytes_` fail with EFBIG (Python ignores SIGXFSZ)."""
    import contextlib

    @contextlib.contextmanager
    def limit():
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (bytes_, hard))
        try:
            yield
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    return limit()


@pytest.mark.parametrize("writer", ["vocab", "augment"])
def test_a_file_size_limit_names_the_output_says_what_to_do_and_leaves_nothing(signal_inputs, tmp_path, capsys,
                                                                                 writer):
    words, name, _ = INTERRUPTED[writer]
    out = tmp_path / name
    argv = [word.format(tiny=signal_inputs, out=out) for word in words]
    with limited_file_size(300):
        assert main(argv) == 2
    error = one_error_line(capsys, argv[0])
    assert f"cannot write {out}" in error and "the file is larger than the file-size limit (ulimit -f)" in error
    assert error.endswith(f"nothing was written to {out}; raise the limit (ulimit -f unlimited) and rerun the same "
                          "command")
    assert snapshot(tmp_path) == {}


@pytest.mark.parametrize("raised, expected", [
    (OSError(27, "File too large", "runs/a/best.keras"), "cannot write runs/a/best.keras: the file is larger than "
     "the file-size limit (ulimit -f); raise the limit (ulimit -f unlimited) and rerun the same command"),
    (PermissionError(13, "Permission denied", "/srv/out"), "/srv/out: permission denied; give a path you may read "
     "and write, or change its permissions"),
    (OSError(28, "No space left on device"), "a write failed: no space left on the disk; free space (or write to "
     "another disk) and rerun the same command"),
    (FileNotFoundError("cross-encoder 'x' does not exist"), "cross-encoder 'x' does not exist"),
], ids=["file_too_large", "permission", "disk_full", "own_message"])
def test_an_oserror_from_any_command_is_one_line_naming_the_file_and_what_to_do(monkeypatch, capsys, raised,
                                                                                 expected):
    import tfbert.commands.configs as configs
    from tfbert.commands.errors import CommandError

    def fails(args):
        raise raised

    def wrapped(args):   # as the commands that catch OSError do
        try:
            fails(args)
        except OSError as error:
            raise CommandError(str(error)) from None

    for run in (fails, wrapped):
        monkeypatch.setattr(configs, "run", run)
        assert main(["configs"]) == 2
        assert one_error_line(capsys, "configs") == f"tfbert configs: error: {expected}"


# --- export: whole versions, or none ---------------------------------------------------------------------------


def export_argv(tiny, output_dir, *extra):
    return ["export", str(tiny / "encoder.keras"), "--tokenizer", str(tiny / "vocab"), "--name", "m",
            "--output-dir", str(output_dir), "--sequence-length", "16", *extra]


def test_export_overwrite_replaces_a_version_and_a_file_size_limit_leaves_nothing(tiny, tmp_path, capsys):
    assert main(export_argv(tiny, tmp_path)) == 0
    (tmp_path / "m" / "1" / "mine.txt").write_text("old")
    assert main(export_argv(tiny, tmp_path, "--version", "1")) == 2
    assert "TF Serving versions are immutable" in one_error_line(capsys, "export")
    assert main(export_argv(tiny, tmp_path, "--version", "1", "--overwrite")) == 0
    assert not (tmp_path / "m" / "1" / "mine.txt").exists() and (tmp_path / "m" / "1" / "saved_model.pb").is_file()
    capsys.readouterr()
    before = snapshot(tmp_path)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, hard))   # as `ulimit -f 16`: writes past 16 kB fail
    try:
        code = main(export_argv(tiny, tmp_path))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert code == 2
    error = one_error_line(capsys, "export")
    assert f"cannot write {tmp_path / 'm' / '2'}" in error and "file-size limit" in error
    assert f"nothing was written to {tmp_path / 'm' / '2'}" in error
    assert snapshot(tmp_path) == before


# --- SIGINT and SIGTERM ----------------------------------------------------------------------------------------


def leftovers(folder):
    return [path for path in snapshot(folder) if ".tfbert-" in path or path.endswith("_temp")]


@pytest.mark.slow
@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_pretrain_stopped_by_a_signal_says_where_to_resume_and_exits_128_plus_the_signal(tiny, tmp_path,
                                                                                          signal_number):
    import tensorflow as tf

    run = tmp_path / "run"
    ended = signal_when(start_tfbert(pretrain_argv(tiny, run, "--steps", "100000", "--checkpoint-every", "2")),
                        lambda: (run / "checkpoint").is_file(), signal_number)
    status, line = ended.status, ended.last_line
    assert status == 128 + signal_number
    latest = tf.train.latest_checkpoint(str(run))
    step = int(line.split(" at step ")[1].split(";")[0])
    assert line == (f"tfbert pretrain: interrupted by {signal.Signals(signal_number).name} at step {step}; "
                    f"rerun the same command to resume from {latest}")
    assert int(latest.rsplit("-", 1)[1]) <= step
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_export_stopped_by_a_signal_leaves_no_version_so_the_rerun_writes_the_same_one(tiny, tmp_path,
                                                                                        signal_number):
    from tfbert.export.saved_model import next_version

    models = tmp_path / "models"

    def building():
        return (models / "m").is_dir() and any(name.startswith(".tfbert-tmp-") for name in os.listdir(models / "m"))

    ended = signal_when(start_tfbert(export_argv(tiny, models)), building, signal_number)
    status, line = ended.status, ended.last_line
    assert status == 128 + signal_number
    assert line == (f"tfbert export: interrupted by {signal.Signals(signal_number).name} before {models / 'm' / '1'} "
                    "was complete; nothing was written, rerun the same command")
    assert snapshot(tmp_path) == {} and next_version(models / "m") == 1


@pytest.fixture(scope="module")
def signal_inputs(tiny, assets):
    """`tiny` with a labelled file, a parallel file, a sentence file, its encoder as a Hugging Face folder and
    as a regression cross-encoder (an untrained head: a few calls, no training)."""
    import keras

    from tfbert.convert.to_huggingface import write_huggingface
    from tfbert.models.tasks import SequenceRegressor
    from tfbert.finetuning.pretrained import load_pretrained_preprocessor
    from tfbert.text import load_tokenizer

    lines = [line for line in (tiny / "corpus.txt").read_text().splitlines() if line.strip()][:16]
    (tiny / "train.tsv").write_text("sentence\tlabel\n" + "".join(f"{line}\t{index % 2}\n"
                                                                  for index, line in enumerate(lines)))
    (tiny / "parallel.tsv").write_text("".join(f"{line}\t{line.upper()}\n" for line in lines))
    (tiny / "sentences.txt").write_text("\n".join(lines[:8]) + "\n")
    # vocab trains for a second or so on the novel (three times over): a signal sent when its lock appears
    # lands while it works, however late the polling test sees the lock on a loaded machine.
    (tiny / "novel.txt").write_text(assets("text/botchan.txt").read_text(encoding="utf-8") * 3, encoding="utf-8")
    encoder, tokenizer = keras.models.load_model(tiny / "encoder.keras"), load_tokenizer(tiny / "vocab")
    write_huggingface(encoder, tiny / "hf", "bert", tokenizer)
    (tiny / "cross").mkdir()
    SequenceRegressor(encoder).save(tiny / "cross" / "model.keras")
    load_pretrained_preprocessor(tiny / "encoder.keras", tokenizer, 16).save(tiny / "cross")
    return tiny


LOCK, STAGING = ".tfbert-lock-", ".tfbert-tmp-"
# Each writer: its argv, its output's name, and the name whose appearance beside the output says the command is
# under way (LOCK: it holds its output's lock; STAGING: it is writing the output under its temporary name).
INTERRUPTED = {
    "vocab": (["vocab", "--kind", "sentencepiece", "--data", "{tiny}/novel.txt", "--vocab-size", "2000",
               "--output", "{out}"], "vocab", LOCK),
    "finetune": (["finetune", "--pretrained", "{tiny}/encoder.keras", "--tokenizer", "{tiny}/vocab", "--train",
                  "{tiny}/train.tsv", "--eval", "{tiny}/train.tsv", "--epochs", "1", "--batch-size", "8",
                  "--max-length", "16", "--strategy", "cpu", "--model-dir", "{out}"], "run", STAGING),
    "distill": (["distill", "--teacher", "{tiny}/hf", "--student", "{tiny}/hf", "--parallel", "{tiny}/parallel.tsv",
                 "--eval", "{tiny}/parallel.tsv", "--epochs", "1", "--batch-size", "8", "--max-length", "16",
                 "--strategy", "cpu", "--model-dir", "{out}"], "run", STAGING),
    "augment": (["augment", "--cross-encoder", "{tiny}/cross/model.keras", "--sentences", "{tiny}/sentences.txt",
                 "--pairs", "random", "--output", "{out}"], "silver.tsv", LOCK),
    "convert": (["convert", "huggingface", "{tiny}/hf", "-o", "{out}"], "model.keras", LOCK),
}


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", INTERRUPTED)
def test_a_signal_ends_every_writer_in_one_line_with_128_plus_it_and_nothing_written(signal_inputs, tmp_path,
                                                                                    capsys, command, signal_number):
    words, name, marker = INTERRUPTED[command]
    out = tmp_path / "out" / name
    argv = [word.format(tiny=signal_inputs, out=out) for word in words]

    def under_way():
        return out.parent.is_dir() and any(entry.startswith(marker) for entry in os.listdir(out.parent))

    ended = signal_when(start_tfbert(argv), under_way, signal_number)
    assert ended.status == 128 + signal_number, ended.stderr[-3000:]
    signal_name = signal.Signals(signal_number).name
    assert ended.last_line == (f"tfbert {argv[0]}: interrupted by {signal_name} before {out} was complete; nothing was "
                               "written, rerun the same command")
    assert snapshot(tmp_path) == {}
    if signal_number == signal.SIGTERM:   # the rerun (in this process: TensorFlow is loaded once)
        assert main(argv) == 0, capsys.readouterr().err
        assert f"{out}" in capsys.readouterr().out and out.exists()
