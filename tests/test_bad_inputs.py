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

    data = tmp_path / "corpus.txt"
    data.write_text("a sentence\n")
    run = tmp_path / "run"
    run.mkdir()
    first_writer = subprocess.Popen([sys.executable, "-c", "import sys, time; from tfbert.output_lock import "
                                     "OutputLock; OutputLock(sys.argv[1]).__enter__(); print('held', flush=True); "
                                     "time.sleep(60)", str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert first_writer.stdout.readline().strip() == "held"
        before = snapshot(tmp_path)
        code = main(["pretrain", "--config", "bert_tiny", "--tokenizer", str(tmp_path / "vocab"),
                     "--data", str(data), "--model-dir", str(run), "--steps", "2"])
        error = capsys.readouterr().err.strip()
        assert code == 2
        assert f"another tfbert process (pid {first_writer.pid}) is writing to {run}" in error and "\n" not in error
        assert snapshot(tmp_path) == before
    finally:
        first_writer.kill()
        first_writer.wait()


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


TSV = "sentence\tlabel\n"
BAD_FINETUNE_DATA = [
    ("empty_tsv", b"", [], "train.tsv, line 1: the file is empty; expected a header line"),
    ("header_only", TSV.encode(), [], "train.tsv: holds no examples"),
    ("bad_utf8", (TSV + "good\t1\nbad\t0\n").encode() + "caf\u00e9\t1\n".encode("latin-1"), [],
     "train.tsv line 4: not valid UTF-8 (byte 4)"),
    ("minus_one", (TSV + "good\t1\nbad\t-1\n").encode(), [],
     "train.tsv, line 3, column 'label': label -1 is not a class id"),
    ("stray_seven", (TSV + "a\t0\nb\t1\nc\t7\nd\t0\n").encode(), [],
     "train.tsv, line 4, column 'label': label 7 leaves class 2 unused (labels seen: 0, 1, 7)"),
    ("above_declared", (TSV + "a\t0\nb\t2\n").encode(), ["--num-classes", "2"],
     "train.tsv, line 3, column 'label': label 2 is not one of the 2 classes (0..1)"),
    ("above_label_names", (TSV + "a\tneg\nb\t5\n").encode(), ["--labels", "neg", "pos"],
     "train.tsv, line 3, column 'label': label 5 is not one of the 2 classes"),
    ("folder", None, [], "train.tsv: is a folder"),
]


@pytest.mark.parametrize("content, options, expected", [row[1:] for row in BAD_FINETUNE_DATA],
                         ids=[row[0] for row in BAD_FINETUNE_DATA])
def test_finetune_refuses_bad_labelled_file_with_one_line_before_loading_a_model(tmp_path, capsys, content, options,
                                                                                 expected):
    train = tmp_path / "train.tsv"
    train.mkdir() if content is None else train.write_bytes(content)
    (tmp_path / "dev.tsv").write_text(TSV + "x\t0\ny\t1\n")
    (tmp_path / "pretrained").mkdir()   # never loaded: the data is checked first
    before = snapshot(tmp_path)
    code = main(["finetune", "--pretrained", str(tmp_path / "pretrained"), "--train", str(train),
                 "--eval", str(tmp_path / "dev.tsv"), "--model-dir", str(tmp_path / "run"), *options])
    error = capsys.readouterr().err.strip()
    assert code == 2
    assert error.startswith("tfbert finetune: error: ") and "\n" not in error
    assert expected in error
    assert snapshot(tmp_path) == before and not (tmp_path / "run").exists()


def test_labels_are_inferred_with_counts_or_checked_against_the_declared_classes(tmp_path):
    from tfbert.finetuning.label_checks import check_class_labels
    from tfbert.data.local_files import DataFileError
    from tfbert.data.text_examples import read_text_examples

    (tmp_path / "train.tsv").write_text(TSV + "a\t0\nb\t1\nc\t1\nd\t2\n")
    (tmp_path / "dev.tsv").write_text(TSV + "x\t3\n")
    train = [("train.tsv", read_text_examples(tmp_path / "train.tsv"))]
    dev = [("dev.tsv", read_text_examples(tmp_path / "dev.tsv"))]
    declared = check_class_labels(train, dev, num_classes=5)
    assert declared.describe() == "5 classes (declared): 0 ×1, 1 ×2, 2 ×1, 3 ×0, 4 ×0"
    with pytest.raises(DataFileError, match=r"dev.tsv, line 2, column 'label': label 3 is not one of the 3 classes"):
        check_class_labels(train, dev)
    inferred = check_class_labels(train, train)
    assert inferred.num_classes == 3 and inferred.describe().startswith("3 classes (inferred from the training labels)")


def test_encoding_errors_replace_reads_undecodable_lines_and_counts_them(tmp_path):
    from tfbert.data.text_decoding import LineDecoder
    from tfbert.data.text_examples import read_text_examples

    (tmp_path / "train.tsv").write_bytes(TSV.encode() + "caf\u00e9\t1\nok\t0\n\u00e0 la\t1\n".encode("latin-1"))
    decoder = LineDecoder("replace")
    examples = read_text_examples(tmp_path / "train.tsv", decoder=decoder)
    assert examples.texts == ["caf\ufffd", "ok", "\ufffd la"] and examples.labels.tolist() == [1, 0, 1]
    assert decoder.summary() == f"{tmp_path / 'train.tsv'}: 2 lines with bytes that are not UTF-8, replaced by U+FFFD " \
                                "(--encoding-errors replace)"


def test_vocab_on_an_empty_file_is_one_line(tmp_path, capsys):
    (tmp_path / "empty.txt").write_bytes(b"")
    code = main(["vocab", "--kind", "wordpiece", "--data", str(tmp_path / "empty.txt"), "--vocab-size", "100",
                 "--output", str(tmp_path / "vocab")])
    error = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in error
    assert "empty.txt is empty or has only blank lines" in error and not (tmp_path / "vocab").exists()


def test_a_pickle_that_runs_code_is_refused_as_a_checkpoint_and_never_run(tmp_path, capsys):
    import json
    import pickle

    pytest.importorskip("torch")
    marker = tmp_path / "ran"

    class RunsCode:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 1,
                                                    "num_attention_heads": 1, "intermediate_size": 8,
                                                    "vocab_size": 10}))
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps({"weight": RunsCode()}))
    code = main(["convert", "huggingface", str(folder), "-o", str(tmp_path / "model.keras")])
    error = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in error
    assert error.startswith("tfbert convert: error: ") and "pytorch_model.bin is not a PyTorch checkpoint of plain " \
                                                         "tensors (torch.load with weights_only=True refused it)" in error
    assert not marker.exists() and not (tmp_path / "model.keras").exists()


def free_port() -> int:
    import socket

    with socket.socket() as probe:   # a free port on which nothing listens
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_grpc_client_with_no_server_says_cannot_reach(capsys):
    pytest.importorskip("tensorflow_serving.apis")
    from tfbert.export import client

    port = free_port()
    code = client.main(["hello", "--model", "m", "--format", "grpc", "--grpc-address", f"grpc://127.0.0.1:{port}"])
    error = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in error
    assert f"cannot reach TF Serving at 127.0.0.1:{port} (unavailable: " in error


@pytest.mark.parametrize("address", ["http://localhost:8501", "localhost:8501", "grpc://127.0.0.1:8500/v1"])
def test_predict_given_a_server_address_says_it_runs_a_local_export(capsys, address):
    code = main(["predict", address, "hello"])
    error = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in error
    assert f"{address!r} is a TF Serving address, not a SavedModel folder" in error
    assert "python -m tfbert.export.client" in error


def test_pretrain_encoding_errors_replace_counts_lines_and_reads_them_with_replacement_characters(tmp_path, capsys):
    from tfbert.commands.pretrain import replaced_documents
    from tfbert.data.input_checks import check_text_files
    from tfbert.data.text_decoding import LineDecoder

    data = write(tmp_path / "latin1.txt", "caf\u00e9 noir\nplain\n\n\u00e0 la carte\n".encode("latin-1"))
    decoder = LineDecoder("replace")
    check_text_files([data], decoder)
    documents = [[sentence.decode("utf-8") for sentence in document.numpy()]
                 for document in replaced_documents([data], decoder)]
    assert documents == [["caf\ufffd noir", "plain"], ["\ufffd la carte"]]
    assert "latin1.txt: 2 lines with bytes that are not UTF-8, replaced by U+FFFD" in capsys.readouterr().err



@pytest.mark.parametrize("block_bytes", [3, 7, 64, 1 << 22])
def test_text_file_check_reads_blocks_of_lines_and_names_the_first_bad_line(tmp_path, monkeypatch, block_bytes):
    """Blocks of any size (smaller than a line, ending mid-line, the whole file) report the same line and byte."""
    from tfbert.data import input_checks
    from tfbert.data.text_decoding import LineDecoder

    monkeypatch.setattr(input_checks, "BLOCK_BYTES", block_bytes)
    cases = {b"hello\nworld\n\ncaf\xe9 noir\nok\n": r"line 4: not valid UTF-8 \(byte 4\)",
             b"hello\nwor\x00ld\ncaf\xe9\n": "line 2: contains a NUL byte",
             b"abc\xe9" + b"y" * 50: r"line 1: not valid UTF-8 \(byte 4\)",
             b"  \n\n \n": "is empty or has only blank lines"}
    for number, (content, message) in enumerate(cases.items()):
        path = write(tmp_path / f"{number}.txt", content)
        with pytest.raises(ValueError, match=message):
            input_checks.check_text_file(path)
    decoder = LineDecoder("replace")
    input_checks.check_text_file(write(tmp_path / "latin1.txt", b"caf\xe9\nok\n\xe0 la\n" * 3), decoder)
    assert decoder.changed_lines == {str(tmp_path / "latin1.txt"): 6}
    input_checks.check_text_file(write(tmp_path / "long.txt", b"x" * 100 + b"\n" + b"y" * 50))

# --- inputs: every numeric flag is checked while the command line is parsed (issue #29 item 2) ---------------------

def _subcommands(parser, path=()):
    """(command words, parser) of every subcommand and sub-action of `tfbert`, e.g. (("vocab", "add"), parser)."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield (*path, name), child
                yield from _subcommands(child, (*path, name))


def _required_arguments(parser) -> list[str]:
    """Placeholder values for the positionals and required options, so that only the flag under test is wrong."""
    import argparse

    argv = []
    for action in parser._actions:
        if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)):
            continue
        value = [str(action.type.low) if hasattr(action.type, "low")
                 else action.choices[0] if isinstance(action.choices, (list, tuple)) else "x"]
        if not action.option_strings:
            argv += value if action.nargs not in ("?", "*") else []
        elif action.required:
            argv += [action.option_strings[0], *value]
    return argv


def _numeric_flag_cases():
    from tfbert.cli import build_parser
    from tfbert.commands.flag_types import NUMERIC_TYPES

    huge = {"WholeNumber": "99999999999999999999", "FiniteNumber": "1e300"}
    for words, parser in _subcommands(build_parser()):
        for action in parser._actions:
            if not isinstance(action.type, NUMERIC_TYPES):
                continue
            flag = action.option_strings[-1]
            for bad in ("0", "-1", "nan", "inf", huge[type(action.type).__name__]):
                try:
                    action.type(bad)
                    continue   # within the flag's range (0 for --seed, -1 for --score-range)
                except Exception:
                    pass
                yield pytest.param(words, _required_arguments(parser), flag, action.nargs, bad,
                                   id=f"{'-'.join(words)}{flag}={bad}")


def test_vocabulary_sizes_beyond_what_tf_text_holds_are_refused_at_parse_time(tmp_path, monkeypatch, capsys):
    """`vocab --vocab-size 10000000` was accepted; TF-Text's tokenizers hold 2**22 = 4,194,304 entries."""
    from tfbert.commands.flag_types import vocab_size

    monkeypatch.chdir(tmp_path)
    assert vocab_size("4194304") == 4_194_304
    with pytest.raises(SystemExit) as exit_info:
        main(["vocab", "--kind", "wordpiece", "--data", "c.txt", "--vocab-size", "10000000", "--output", "v"])
    error = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and "\n" not in error
    assert error.startswith("tfbert vocab: error: argument --vocab-size: 10000000 is out of range; give a whole "
                            "number from 1 to 4194304 (the most TF-Text's tokenizers hold)"), error
    assert not (tmp_path / "v").exists()


def test_every_numeric_flag_has_a_checked_type():
    from tfbert.cli import build_parser

    bare = [f"{' '.join(words)} {action.option_strings}" for words, parser in _subcommands(build_parser())
            for action in parser._actions if action.type in (int, float)]
    assert bare == [], "numeric flags without a tfbert.commands.flag_types type"


@pytest.mark.parametrize("words, required, flag, nargs, bad", list(_numeric_flag_cases()))
def test_numeric_flag_out_of_range_is_one_line_at_parse_time_and_writes_nothing(tmp_path, monkeypatch, capsys, words,
                                                                               required, flag, nargs, bad):
    monkeypatch.chdir(tmp_path)
    values = [bad, "1"] if nargs == 2 else [bad]
    with pytest.raises(SystemExit) as exit_info:
        main([*words, *required, flag, *values])
    error = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2
    assert error.startswith(f"tfbert {' '.join(words)}: error: argument {flag}") and "\n" not in error, error
    assert "give" in error
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argv, expected", [
    (["pretrain", "--warmup-steps", "20", "--steps", "10"], "--warmup-steps 20 is more than --steps 10"),
    (["pretrain", "--steps", "10", "--sequence-length", "8", "--max-predictions", "6"],
     "--max-predictions 6 leaves no room in --sequence-length 8"),
    (["pretrain", "--steps", "10", "--steps-per-execution", "3"],
     "--steps 10 is not a multiple of --steps-per-execution 3"),
    (["finetune", "--task", "embedding", "--score-range", "5", "0"], "--score-range 5 0: give LOW below HIGH"),
], ids=["warmup_above_steps", "predictions_fill_sequence", "steps_per_execution", "score_range_reversed"])
def test_flags_that_disagree_are_one_line_before_anything_runs(tmp_path, monkeypatch, capsys, argv, expected):
    monkeypatch.chdir(tmp_path)
    required = {"pretrain": ["--data", "x", "--model-dir", "run", "--config", "bert_tiny"],
                "finetune": ["--pretrained", "x", "--model-dir", "run"]}[argv[0]]
    assert main([*argv, *required]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"tfbert {argv[0]}: error: {expected}") and "\n" not in error
    assert os.listdir(tmp_path) == []


# The issue's bullets that the parser walk above does not try (it tries 0, -1, nan, inf and a huge value).
ISSUE_BULLETS = [
    ("sequence_length_3", ["pretrain", "--config", "bert_tiny", "--data", "c.txt", "--model-dir", "run",
                           "--sequence-length", "3"], "argument --sequence-length: 3 is out of range; give a whole "
                                                      "number from 8"),
    ("max_length_2", ["finetune", "--pretrained", "x", "--model-dir", "run", "--max-length", "2"],
     "argument --max-length: 2 is out of range; give a whole number from 8"),
    ("sentencepiece_vocab_size_5", ["vocab", "--kind", "sentencepiece", "--data", "c.txt", "--vocab-size", "5",
                                    "--output", "v"], "vocab size 5 is smaller than the"),
    ("unknown_data_extension", ["finetune", "--pretrained", "x", "--train", "c.txt", "--eval", "c.txt",
                                "--model-dir", "run"], "name the file .csv, .tsv or .jsonl"),
]


@pytest.mark.parametrize("argv, expected", [row[1:] for row in ISSUE_BULLETS], ids=[row[0] for row in ISSUE_BULLETS])
def test_the_issues_other_bad_inputs_are_one_line_and_write_nothing(tmp_path, monkeypatch, capsys, argv, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("a first line of text\nand a second one\n")
    (tmp_path / "x").mkdir()
    try:
        code = main(argv)
    except SystemExit as exit_info:
        code = exit_info.code
    error = capsys.readouterr().err.strip()
    assert code == 2 and error.startswith(f"tfbert {argv[0]}: error: ") and "\n" not in error, error
    assert expected in error
    assert sorted(os.listdir(tmp_path)) == ["c.txt", "x"] and os.listdir(tmp_path / "x") == []


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "../up", " padded", "tab\there"])
def test_export_name_must_be_one_plain_folder_name(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["export", "model.keras", "--name", name])
    error = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and "\n" not in error
    assert "argument --name" in error and "is not a plain folder name" in error
    assert os.listdir(tmp_path) == []


# --- inputs: data read from files is refused at its line, never trained on (issue #29 items 1, 6) ------------------

BAD_LABELLED_ROWS = [
    ("nan_score", TSV + "a\t1.5\nb\tnan\n", ["--task", "regression"],
     "train.tsv, line 3, column 'label': score 'nan' is not a finite number"),
    ("inf_score", TSV + "a\t1.5\nb\t-inf\n", ["--task", "regression"],
     "train.tsv, line 3, column 'label': score '-inf' is not a finite number"),
    ("score_beyond_float32", TSV + "a\t1.5\nb\t1e39\n", ["--task", "regression"],
     "train.tsv, line 3, column 'label': score '1e39' is not a finite number"),
    ("label_beyond_int32", TSV + "a\t0\nb\t99999999999999999999\n", [],
     "train.tsv, line 3, column 'label': label 99999999999999999999 is beyond the class ids a model holds"),
    ("nan_label", TSV + "a\t0\nb\tnan\n", [], "train.tsv, line 3, column 'label': 'nan' is not an integer class id"),
    ("duplicate_column", "sentence\tlabel\tlabel\na\t0\t1\n", [],
     "train.tsv, line 1: the header names 'label' more than once; give every column its own name"),
]


@pytest.mark.parametrize("content, options, expected", [row[1:] for row in BAD_LABELLED_ROWS],
                         ids=[row[0] for row in BAD_LABELLED_ROWS])
def test_finetune_refuses_non_finite_and_out_of_range_labels_at_their_line(tmp_path, capsys, content, options,
                                                                           expected):
    (tmp_path / "train.tsv").write_text(content)
    (tmp_path / "dev.tsv").write_text(TSV + "x\t0\ny\t1\n")
    (tmp_path / "pretrained").mkdir()   # never loaded: the data is checked first
    before = snapshot(tmp_path)
    code = main(["finetune", "--pretrained", str(tmp_path / "pretrained"), "--train", str(tmp_path / "train.tsv"),
                 "--eval", str(tmp_path / "dev.tsv"), "--model-dir", str(tmp_path / "run"), *options])
    error = capsys.readouterr().err.strip()
    assert code == 2 and error.startswith("tfbert finetune: error: ") and "\n" not in error
    assert expected in error
    assert snapshot(tmp_path) == before and not (tmp_path / "run").exists()


@pytest.mark.parametrize("suffix, content", [(".tsv", "\ufeffsentence\tlabel\na\t0\nb\t1\n"),
                                             (".csv", "\ufeffsentence,label\na,0\nb,1\n"),
                                             (".jsonl", '\ufeff{"sentence": "a", "label": 0}\n{"sentence": "b", '
                                                        '"label": 1}\n')])
def test_a_utf8_byte_order_mark_is_not_part_of_the_first_column(tmp_path, suffix, content):
    from tfbert.data.text_examples import read_text_examples

    path = tmp_path / f"train{suffix}"
    path.write_text(content, encoding="utf-8")
    examples = read_text_examples(path)
    assert examples.texts == ["a", "b"] and examples.labels.tolist() == [0, 1]


def test_sentence_pair_scores_must_be_finite(tmp_path):
    from tfbert.tasks import read_sentence_pairs
    from tfbert.data.local_files import DataFileError

    (tmp_path / "pairs.tsv").write_text("a\tb\t1.0\nc\td\tnan\n")
    with pytest.raises(DataFileError, match=r"pairs.tsv, line 2, column 'field 3': expected a finite number, "
                                            r"got 'nan'"):
        read_sentence_pairs(tmp_path / "pairs.tsv")


def test_evaluate_reports_constant_gold_scores_as_correlation_undefined(tmp_path, capsys):
    from tfbert.commands.evaluate import _format_table, evaluate_files

    (tmp_path / "flat.tsv").write_text("a\tb\t3.0\nc\td\t3.0\ne\tf\t3\n")
    rows = evaluate_files(None, [str(tmp_path / "flat.tsv")], cross_encoder=False)   # no model is run
    assert rows[0]["pearson"] is None and rows[0]["spearman"] is None
    table = _format_table(rows)
    assert "undefined  undefined  (correlation undefined: every gold score is 3)" in table and "0.0000" not in table


def test_finetuning_refuses_constant_evaluation_scores():
    import numpy as np

    from tfbert.finetuning.evaluation import regression_evaluator, similarity_evaluator

    for make in (regression_evaluator, similarity_evaluator):
        with pytest.raises(ValueError, match="every evaluation score is 2: a correlation with constant scores is "
                                             "undefined"):
            make({}, np.full(4, 2.0, np.float32))


def test_augment_never_writes_a_non_finite_score(tmp_path):
    import numpy as np

    from tfbert.data.silver import write_silver

    with pytest.raises(ValueError, match="1 of the 2 scores are not finite; nothing written"):
        write_silver(tmp_path / "silver.tsv", ["a", "b", "c"], [(0, 1), (1, 2)], np.array([0.5, np.nan]))
    assert not (tmp_path / "silver.tsv").exists()


def test_a_model_whose_outputs_are_not_finite_is_refused_naming_the_text():
    import numpy as np

    from tfbert.inference.text_models import finite_outputs

    values = np.array([0.5, np.inf, np.nan], np.float32)
    with pytest.raises(ValueError, match=r"non-finite score for text 2 \('second'\) and 1 other\(s\)"):
        finite_outputs(values, "score", ["first", "second", "third"])
    assert finite_outputs(values[:1], "score", ["first"]).tolist() == [0.5]


# --- inputs: messages in the user's terms (issue #29 item 5) -------------------------------------------------------

def test_load_config_of_a_folder_says_it_is_a_folder(tmp_path):
    from tfbert.config import load_config

    with pytest.raises(IsADirectoryError, match="is a folder; give a YAML config file"):
        load_config(tmp_path)


def test_fill_mask_export_refuses_top_k_beyond_the_vocabulary_before_tracing():
    from types import SimpleNamespace

    from tfbert.export.tasks import FillMask

    preprocessor = SimpleNamespace(tokenizer=SimpleNamespace(vocabulary_size=lambda: 30522), sequence_length=128)
    with pytest.raises(ValueError, match=r"top_k \(--top-k\) 100000 is more than the 30,522 tokens of the vocabulary"):
        FillMask(top_k=100_000).check(preprocessor)
    with pytest.raises(ValueError, match=r"max_masks \(--max-masks\) 200 is more than the sequence length 128"):
        FillMask(max_masks=200).check(preprocessor)
    FillMask(top_k=30522, max_masks=128).check(preprocessor)


def test_predict_names_the_line_of_stdin_that_is_not_utf8():
    import io

    from tfbert.commands.predict import PredictInputError, read_texts

    stdin = io.TextIOWrapper(io.BytesIO("fine\ncaf\u00e9\n".encode("latin-1")), encoding="utf-8")
    with pytest.raises(PredictInputError, match=r"stdin line 2: not valid UTF-8 \(byte 4\)"):
        read_texts(["-"], None, stdin)
    with pytest.raises(PredictInputError, match=r"^text argument 1: not valid UTF-8 \(byte 4\)"):
        read_texts(["caf\udce9"], None, io.StringIO(""))
    assert read_texts(["-"], None, io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbfone\ntwo\n"))) == ["one", "two"]


def test_non_finite_flag_values_never_reach_a_message_from_python_internals(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["finetune", "--pretrained", "x", "--model-dir", "run", "--learning-rate", "nan"])
    error = capsys.readouterr().err
    assert "argument --learning-rate: nan is not a finite number; give a number above 0 up to 1" in error


# --- inputs: the Python API takes a bare string as one text (issue #29 item 7) --------------------------------------

def test_a_bare_string_is_one_text_and_none_is_named_by_its_index(assets):
    from tfbert.data.text_lists import text_list
    from tfbert.tasks import encode_texts
    from tfbert.text import WordPieceTokenizer

    assert text_list("abc") == ["abc"] and text_list(("a", "b")) == ["a", "b"]
    with pytest.raises(TypeError, match=r"texts\[1\] is None; give a string for every text"):
        text_list(["a", None])
    with pytest.raises(TypeError, match=r"texts\[0\] is int 3; give a string for every text"):
        text_list([3])
    with pytest.raises(TypeError, match="texts is NoneType; give a string or a list of strings"):
        text_list(None)
    assert text_list([("q", "c")], allow_tuples=True) == [("q", "c")]
    tokenizer = WordPieceTokenizer(assets("minilm/vocab.txt"))
    assert encode_texts(tokenizer, "a gripping film", max_length=16)["token_ids"].shape == (1, 16)
