"""`tfbert predict`: run a SavedModel (or TF Lite folder) written by `tfbert export` on texts, and print what it says.

    tfbert predict saved_models/fill_mask "paris is the [MASK] of france."      # top-k tokens per mask
    tfbert predict saved_models/sst2 "a gripping film" "a dull film" --json      # label and probabilities
    tfbert predict saved_models/minilm --file sentences.txt --output vectors.npy  # embeddings
    cat texts.txt | tfbert predict saved_models/sst2                             # stdin, one text a line
    tfbert predict saved_models/squad --question "Who wrote it?" "Ada wrote it in 1843."
    tfbert predict saved_models/swag $'He opens the door.\\tHe walks in.\\tHe flies away.'  # context, choices
    tfbert predict saved_models/xlm_sst2 --language fr "un film captivant"                # XLM's language input
    tfbert predict saved_models/minilm_lite "a gripping film" --threads 2   # a TF Lite export (--format tflite)

The task comes from the outputs of the SavedModel's `serving_default` signature (see
`tfbert.export.tasks`); `--signature tokenize` or `preprocess` runs the other text signatures.
Models that take two texts (`text` + `text_pair`, `question` + `context`) read each example as
`FIRST<TAB>SECOND`, or take the first from `--text-pair` / `--question` for every text; multiple choice
reads `CONTEXT<TAB>CHOICE<TAB>CHOICE...`. The export runs through `tfbert.export.client.SavedModelClient`
(`predict_texts` there is the Python form of this command); a TF Lite export through its interpreter
(`tfbert.export.tflite_model`), on `--threads` threads.

Example:
    >>> format_record({"text": "a gripping film", "task": "regression", "score": 4.25})
    ['a gripping film', '  score 4.2500']
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Iterable, Sequence

from tfbert.commands import add_command, add_overwrite_argument, flag_types
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.export.client import PredictInputError, SavedModelClient, shorten
from tfbert.export.tflite_model import interpreter_threads
from tfbert.outputs import check_free, new_output

# TensorFlow is imported when the client loads the export, so `tfbert --help` stays instant.

# `http://host:8501/...`, `grpc://host:8500` or `host:port`: a server, which predict does not call.
SERVER_ADDRESS = re.compile(r"^((https?|grpc)://|[\w.-]+:\d+(/|$))")


def refuse_server_address(path: str | os.PathLike) -> None:
    """A TF Serving address given where predict wants a local export is refused with what to run instead
    (the export folder itself is resolved by `SavedModelClient`)."""
    if not Path(path).exists() and SERVER_ADDRESS.match(str(path)):
        raise PredictInputError(
            f"{path!r} is a TF Serving address, not a SavedModel folder: tfbert predict runs a local export "
            "(saved_models/NAME); to query a server run python -m tfbert.export.client --model NAME "
            "--rest-address HOST:PORT TEXT (it says 'cannot reach TF Serving at HOST:PORT' when none answers)")


def format_record(record: dict, values: int = 6) -> list[str]:
    """Human-readable lines for one `predict_texts` dict: the input, then its results indented."""
    task = record["task"]
    if "question" in record:
        lines = [f"Q: {shorten(record['question'])}", f"C: {shorten(record['context'])}"]
    elif "choices" in record:
        lines = [f"C: {shorten(record['context'])}"]
    elif "text_pair" in record:
        lines = [f"{shorten(record['text'], 60)}  |  {shorten(record['text_pair'], 60)}"]
    else:
        lines = [shorten(record["text"])]
    if task == "fill_mask":
        if not record["masks"]:
            lines.append("  no mask token found (within the export's sequence length)")
        for number, mask in enumerate(record["masks"], 1):
            guesses = "  ".join(f"{p['token']} {p['score']:.4f}" for p in mask["predictions"])
            lines.append(f"  mask {number}: {guesses}")
    elif task == "multiple_choice":
        lines.extend(f"  {'*' if index == record['choice_id'] else ' '} {probability:.4f}  {shorten(choice, 80)}"
                     for index, (choice, probability) in enumerate(zip(record["choices"], record["probabilities"])))
    elif task == "classification":
        probabilities = ", ".join(f"{name} {value:.4f}" for name, value in record["probabilities"].items())
        lines.append(f"  {record['label']}  ({probabilities})")
    elif task == "regression":
        lines.append(f"  score {record['score']:.4f}")
    elif task == "embedding":
        vector = record["embedding"]
        shown = ", ".join(f"{value:.4f}" for value in vector[:values])
        lines.append(f"  embedding of {len(vector)} values: [{shown}{', ...' if len(vector) > values else ''}]")
    elif task == "tagging":
        lines.append("  " + " ".join(f"{piece['text']}/{piece['tag']}" for piece in record["tokens"]))
    elif task == "question_answering":
        lines.append(f"  answer {record['answer']!r} (characters {record['start']}-{record['end']}, "
                     f"score {record['score']:.4f})")
    elif task == "tokenize":
        lines.append(f"  {len(record['token_ids'])} tokens: {record['token_ids']}")
    else:
        lines.append(f"  input_word_ids {record['input_word_ids']}")
        lines.append(f"  input_type_ids {record['input_type_ids']}")
    return lines


def read_texts(texts: Sequence[str], file: str | None, stdin=None) -> list[str]:
    """The texts from the arguments, `--file` (a text a line) and stdin (`-`, or no text and stdin not a terminal).

    Blank lines of a file or stdin are skipped; an empty argument is a text.
    """
    stdin = sys.stdin if stdin is None else stdin
    found: list[str] = []
    read_stdin = "-" in texts or (not texts and file is None and stdin is not None and not _is_terminal(stdin))
    found.extend(_utf8_text(text, f"text argument {number}") for number, text in enumerate(texts, 1) if text != "-")
    if file is not None:
        path = Path(file)
        if not path.is_file():
            raise FileNotFoundError(f"--file {file!r} does not exist" if not path.exists() else
                                    f"--file {file!r} is not a file")
        found.extend(_lines(_utf8_text(path.read_bytes(), f"--file {file!r}")))
    if read_stdin and stdin is not None:
        found.extend(_lines(_utf8_text(getattr(stdin, "buffer", stdin).read(), "stdin")))
    if not found:
        source = f"--file {file!r} holds no text" if file is not None else "no input text"
        raise PredictInputError(f"{source}: give texts as arguments, --file PATH (one text a line), "
                                "or pipe them on stdin ('-')")
    return found


def _utf8_text(data: bytes | str, source: str) -> str:
    """`data` as text, or `PredictInputError` naming the line of the first byte that is not UTF-8 (a `str` from
    the command line or stdin carries such bytes as surrogates)."""
    try:
        raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as error:   # a lone surrogate that stands for no byte
        raise PredictInputError(f"{source}: holds the lone surrogate U+{ord(data[error.start]):04X}, which is not "
                                "text; give UTF-8 text") from None
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        where = f"{source} line {line}" if raw.count(b"\n") else source
        raise PredictInputError(f"{where}: not valid UTF-8 (byte {column}); convert it to UTF-8 first, e.g. "
                                "iconv -f latin1 -t utf-8") from None


def _lines(text: str) -> Iterable[str]:
    return (line.rstrip("\r") for line in text.split("\n") if line.strip())


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return True


def _check_output(output: str, task: str | None = None) -> None:
    suffix = Path(output).suffix
    if suffix not in (".npy", ".jsonl"):
        raise PredictInputError(f"--output {output!r}: use a .npy file (embeddings) or a .jsonl file")
    if suffix == ".npy" and task not in (None, "embedding"):
        raise PredictInputError(f"--output {output!r}: .npy is for embeddings; this is a {task} model, use .jsonl")


def _write_output(records: list[dict], output: str, task: str, overwrite: bool = False) -> str:
    """Writes `output` as every output is written (`tfbert.outputs.new_output`): refused if it exists without
    `overwrite`, under a temporary name until complete, and a full disk named."""
    with new_output(output, flag="--output", overwrite=overwrite) as staging:
        if Path(output).suffix == ".npy":
            import numpy as np

            vectors = np.asarray([record["embedding"] for record in records], dtype=np.float32)
            with open(staging, "wb") as handle:
                np.save(handle, vectors)
            summary = f"{vectors.shape[0]} embeddings of {vectors.shape[1]} values"
        else:
            with open(staging, "w", encoding="utf-8") as handle:
                for record in records:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            summary = f"{len(records)} {task} predictions, a JSON object a line"
    return f"wrote {output}: {summary}"


def _progress_printer(stream):
    """`progress(done, total)` that redraws one line on a terminal; nothing otherwise."""
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None

    def progress(done: int, total: int) -> None:
        if total > 1:
            stream.write(f"\rpredicting {done}/{total}" + ("\n" if done == total else ""))
            stream.flush()
    return progress


def run(args: argparse.Namespace) -> None:
    """`tfbert predict`: read the texts, run the SavedModel, print (or write) the predictions."""
    import_tensorflow_quietly()

    try:
        if args.question is not None and args.text_pair is not None:
            raise PredictInputError("give --question or --text-pair, not both")
        if args.output:
            _check_output(args.output)
            check_free(args.output, flag="--output", overwrite=args.overwrite)   # before the model is read
        texts = read_texts(args.texts, args.file)
        refuse_server_address(args.saved_model)
        predictor = SavedModelClient(args.saved_model, args.signature, threads=args.threads)
        threads_note = interpreter_threads(args.threads)[1]
        if threads_note:
            print(f"note: --{threads_note}", file=sys.stderr)
        if args.output:
            _check_output(args.output, predictor.task)
        first = args.question if args.question is not None else args.text_pair
        if args.question is not None and predictor.input_names[0] != "question":
            raise PredictInputError(f"--question is for question answering models; this one is {predictor.task}")
        if args.text_pair is not None and predictor.input_names != ("text", "text_pair"):
            raise PredictInputError(f"--text-pair is for models exported with --pair; this {predictor.task} model "
                                    f"takes {' and '.join(predictor.input_names)}")
        available = predictor.top_k_available
        if available is not None and args.top_k > available:
            print(f"note: this export returns {available} tokens per mask; export with --top-k {args.top_k} "
                  "for more", file=sys.stderr)
        records = predictor(texts, top_k=args.top_k, first=first, batch_size=args.batch_size,
                            progress=_progress_printer(sys.stderr), language=args.language)
        if args.output:
            print(_write_output(records, args.output, predictor.task, args.overwrite))
            return
    except (FileNotFoundError, ValueError) as error:
        raise CommandError(str(error)) from None
    for record in records:
        if args.json:
            print(json.dumps(record, ensure_ascii=False))
        else:
            print("\n".join(format_record(record)))


EXAMPLES = """
tfbert predict saved_models/fill_mask "paris is the [MASK] of france."
tfbert predict saved_models/sst2 "a gripping film" "a dull film" --json
tfbert predict saved_models/minilm --file sentences.txt --output vectors.npy
cat texts.txt | tfbert predict saved_models/sst2 -
tfbert predict saved_models/mnli $'A man sleeps.\\tA person rests.'
tfbert predict saved_models/squad --question "Who wrote it?" "Ada wrote it in 1843."
tfbert predict saved_models/swag $'He opens the door.\\tHe walks in.\\tHe flies away.'
tfbert predict saved_models/xlm_sst2 --language fr "un film captivant"
tfbert predict saved_models/minilm_lite "a gripping film" --threads 2
"""


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `predict` subcommand to `tfbert`'s subparsers."""
    predict = add_command(
        commands, "predict", "run a SavedModel from tfbert export on texts (arguments, --file or stdin)",
        "Run a SavedModel (or a TF Lite folder, --format tflite) written by tfbert export on raw texts and print its "
        "predictions. The task (fill-mask, classification, regression, embeddings, token classification, question "
        "answering) is read from the export's serving_default signature. Pair models take each example as "
        "FIRST<TAB>SECOND, or --text-pair / --question once for every text. Embeddings print their size and first "
        "values; --json (one JSON object a line) or --output give the full vectors.",
        EXAMPLES)
    predict.add_argument("saved_model", help="the export: saved_models/NAME/VERSION, or saved_models/NAME (its "
                                             "highest version, or a TF Lite export's folder)")
    predict.add_argument("texts", nargs="*", help="texts to run; '-' (or none, with stdin not a terminal) reads "
                                                  "stdin, a text a line")
    predict.add_argument("--file", help="a UTF-8 file with one text a line (blank lines skipped)")
    predict.add_argument("--top-k", type=flag_types.positive_int, default=5,
                         help="fill-mask: tokens shown per mask (default 5, at most what the export returns)")
    predict.add_argument("--json", action="store_true", help="print one JSON object a line (full embedding vectors)")
    predict.add_argument("--output", help="write every prediction to FILE.jsonl, or embeddings to FILE.npy "
                                          "([texts, size] float32)")
    add_overwrite_argument(predict, "replace an existing --output file, once the new one is complete")
    predict.add_argument("--question", help="question answering: the question asked of every text (the contexts)")
    predict.add_argument("--text-pair", help="pair models: the second text of every example")
    predict.add_argument("--signature", help="the signature to run (default serving_default; tokenize and "
                                             "preprocess also take text)")
    predict.add_argument("--batch-size", type=flag_types.positive_int, default=32, help="texts per call (default 32)")
    predict.add_argument("--threads", type=flag_types.positive_int,
                         help="TF Lite exports: the interpreter's threads (default, and at most: every core this "
                              "process may use)")
    predict.add_argument("--language", help="XLM exports with language embeddings: the language of every text "
                                            "(one of the names the export lists)")
    predict.set_defaults(run=run, intermixed="texts")
    return predict
