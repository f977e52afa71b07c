"""Bad inputs give one line `tfbert COMMAND: error: ...`, exit status 2, and change nothing on disk."""

import os

import pytest

from tfbert.cli import main


def write(path, content: bytes):
    path.write_bytes(content)
    return str(path)


BAD_DATA = [
    ("empty", lambda tmp: write(tmp / "empty.txt", b""), "is empty or has only blank lines"),
    ("blank_only", lambda tmp: write(tmp / "blank.txt", b"\n  \n\t\n"), "is empty or has only blank lines"),
    ("nul_byte", lambda tmp: write(tmp / "nul.txt", b"fine line\nlord\0said\n"), "line 2: contains a NUL byte"),
    ("binary", lambda tmp: write(tmp / "ls.bin", open("/bin/ls", "rb").read()), "contains a NUL byte"),
    ("bad_utf8", lambda tmp: write(tmp / "latin1.txt", "ok\nok\ncaf\u00e9\n".encode("latin-1")),
     "line 3: not valid UTF-8"),
    ("folder", lambda tmp: str(tmp), "is a folder; give a text file"),
    ("missing", lambda tmp: str(tmp / "nope.txt"), "nope.txt"),
]


def snapshot(folder):
    return {path: os.stat(os.path.join(root, path)).st_mtime_ns
            for root, _, files in os.walk(folder) for path in files}


@pytest.mark.parametrize("make_data, expected", [row[1:] for row in BAD_DATA], ids=[row[0] for row in BAD_DATA])
def test_pretrain_refuses_bad_data_file_with_one_line(tmp_path, capsys, make_data, expected):
    data = make_data(tmp_path)
    before = snapshot(tmp_path)
    code = main(["pretrain", "--config", "bert_tiny", "--tokenizer", str(tmp_path / "vocab"), "--data", data,
                 "--model-dir", str(tmp_path / "run"), "--steps", "2"])
    error = capsys.readouterr().err.strip()
    assert code == 2
    assert error.startswith("tfbert pretrain: error: ") and "\n" not in error
    assert expected in error
    assert data in error or os.path.basename(data) in error
    assert snapshot(tmp_path) == before
    assert not (tmp_path / "run").exists()


def test_second_writer_on_a_run_directory_is_refused_naming_the_first(tmp_path, capsys):
    import subprocess
    import sys

    from tfbert.training.run_lock import LOCK_NAME

    data = tmp_path / "corpus.txt"
    data.write_text("a sentence\n")
    run = tmp_path / "run"
    run.mkdir()
    first_writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (run / LOCK_NAME).write_text(str(first_writer.pid))
        before = snapshot(run)
        code = main(["pretrain", "--config", "bert_tiny", "--tokenizer", str(tmp_path / "vocab"),
                     "--data", str(data), "--model-dir", str(run), "--steps", "2"])
        error = capsys.readouterr().err.strip()
        assert code == 2
        assert f"another process (pid {first_writer.pid}) is writing to {run}" in error and "\n" not in error
        assert snapshot(run) == before
    finally:
        first_writer.kill()
        first_writer.wait()


def test_stale_lock_of_a_dead_process_is_taken_over_and_released(tmp_path):
    import subprocess
    import sys

    from tfbert.training.run_lock import LOCK_NAME, RunLock

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / LOCK_NAME).write_text(dead.stdout.strip())
    with RunLock(str(tmp_path)):
        assert (tmp_path / LOCK_NAME).read_text() == str(os.getpid())
    assert not (tmp_path / LOCK_NAME).exists()


def test_pretrain_refuses_sequence_length_above_max_positions(tmp_path, capsys):
    from tfbert.config import load_config

    limit = load_config("bert_tiny").encoder.max_sequence_length
    data = tmp_path / "corpus.txt"
    data.write_text("a sentence\n")
    code = main(["pretrain", "--config", "bert_tiny", "--tokenizer", str(tmp_path / "vocab"), "--data", str(data),
                 "--model-dir", str(tmp_path / "run"), "--steps", "2", "--sequence-length", str(limit + 1)])
    error = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in error
    assert f"--sequence-length {limit + 1} is above the model's limit of {limit} positions" in error
    assert not (tmp_path / "run").exists()


def test_rest_client_with_no_server_says_cannot_reach_and_accepts_http_prefix(capsys):
    import socket

    from tfbert.export import client

    with socket.socket() as probe:   # a free port on which nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = client.main(["hello", "--model", "m", "--rest-address", f"http://127.0.0.1:{port}"])
    error = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in error
    assert f"cannot reach TF Serving at 127.0.0.1:{port} (connection refused)" in error
