"""`tfbert predict`: run a SavedModel written by `tfbert export` on texts, and print what it says.

    tfbert predict saved_models/fill_mask "paris is the [MASK] of france."      # top-k tokens per mask
    tfbert predict saved_models/sst2 "a gripping film" "a dull film" --json      # label and probabilities
    tfbert predict saved_models/minilm --file sentences.txt --output vectors.npy  # embeddings
    cat texts.txt | tfbert predict saved_models/sst2                             # stdin, one text a line
    tfbert predict saved_models/squad --question "Who wrote it?" "Ada wrote it in 1843."
    tfbert predict saved_models/swag $'He opens the door.\\tHe walks in.\\tHe flies away.'  # context, choices
    tfbert predict saved_models/xlm_sst2 --language fr "un film captivant"                # XLM's language input

The task comes from the outputs of the SavedModel's `serving_default` signature (see
`tfbert.export.tasks`); `--signature tokenize` or `preprocess` runs the other text signatures.
Models that take two texts (`text` + `text_pair`, `question` + `context`) read each example as
`FIRST<TAB>SECOND`, or take the first from `--text-pair` / `--question` for every text; multiple choice
reads `CONTEXT<TAB>CHOICE<TAB>CHOICE...`.

Example:
    >>> (record,) = predict_texts("saved_models/fill_mask/1", ["paris is the [MASK] of france."], top_k=2)  # doctest: +SKIP
    >>> record["masks"][0]["position"], [p["token"] for p in record["masks"][0]["predictions"]]  # doctest: +SKIP
    (4, [...two tokens, most probable first...])
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Iterable, Sequence

from tfbert.commands import add_command, flag_types
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly

# TensorFlow is imported inside the functions, so `tfbert --help` stays instant.

# Output names that identify each task's signature, checked in this order (question answering and
# fill-mask before regression and tokenize, whose outputs they include).
TASK_OUTPUTS: tuple[tuple[str, frozenset[str]], ...] = (
    ("fill_mask", frozenset({"tokens", "token_ids", "scores", "mask_positions"})),
    ("question_answering", frozenset({"answer", "start", "end", "score"})),
    ("multiple_choice", frozenset({"logits", "probabilities", "choice_id"})),
    ("tagging", frozenset({"tokens", "tag_ids", "tags", "start", "end"})),
    ("classification", frozenset({"label", "probabilities"})),
    ("regression", frozenset({"score"})),
    ("embedding", frozenset({"embedding"})),
    ("tokenize", frozenset({"token_ids", "lengths"})),
    ("preprocess", frozenset({"input_word_ids", "input_mask", "input_type_ids"})),
)
# String inputs each task's signature takes, in the order a `FIRST<TAB>SECOND` example fills them.
INPUT_ORDERS = (("text",), ("text", "text_pair"), ("question", "context"), ("context", "choices"))
# The extra input of XLM exports with language embeddings: one language name per example (`--language`).
LANGUAGE_INPUT = "language"
METADATA_FILE = "tfbert_export.json"
SERVING_TASKS = ("fill-mask, classification, regression, embeddings, token classification, question answering, "
                 "multiple choice")


class PredictInputError(ValueError):
    """Bad arguments or input for `tfbert predict`, reported as one line."""


# `http://host:8501/...`, `grpc://host:8500` or `host:port`: a server, which predict does not call.
SERVER_ADDRESS = re.compile(r"^((https?|grpc)://|[\w.-]+:\d+(/|$))")


def find_saved_model(path: str | os.PathLike) -> Path:
    """The SavedModel `path` names (`tfbert.artifacts.resolve_saved_model`: it, or its highest version folder);
    a TF Serving address is refused with what to run instead."""
    from tfbert.artifacts.saved_models import resolve_saved_model

    if not Path(path).exists() and SERVER_ADDRESS.match(str(path)):
        raise PredictInputError(
            f"{path!r} is a TF Serving address, not a SavedModel folder: tfbert predict runs a local export "
            "(saved_models/NAME); to query a server run python -m tfbert.export.client --model NAME "
            "--rest-address HOST:PORT TEXT (it says 'cannot reach TF Serving at HOST:PORT' when none answers)")
    try:
        return resolve_saved_model(path)
    except ValueError as error:
        raise PredictInputError(str(error)) from None


def signature_task(signature) -> str | None:
    """The tfbert task a signature computes, from its output names; None when it is none of them."""
    outputs = set(signature.structured_outputs)
    return next((task for task, names in TASK_OUTPUTS if names <= outputs), None)


def _string_inputs(signature) -> tuple[str, ...] | None:
    """The signature's input names in example order (without `language`), or None when it does not take
    strings only."""
    import tensorflow as tf

    specs = signature.structured_input_signature[1]
    if not specs or any(spec.dtype != tf.string for spec in specs.values()):
        return None
    specs = {name: spec for name, spec in specs.items() if name != LANGUAGE_INPUT}
    return next((order for order in INPUT_ORDERS if set(order) == set(specs)), tuple(sorted(specs)))


def _describe(signature) -> str:
    specs = signature.structured_input_signature[1]
    inputs = ", ".join(f"{name} ({spec.dtype.name})" for name, spec in sorted(specs.items()))
    return f"takes {inputs or 'nothing'} and returns {', '.join(sorted(signature.structured_outputs))}"


class Predictor:
    """A loaded tfbert SavedModel and the signature `predict` runs; call it on texts for one dict per example.

    Example:
        >>> predictor = Predictor("saved_models/sst2")  # doctest: +SKIP
        >>> predictor.task, predictor.input_names  # doctest: +SKIP
        ('classification', ('text',))
        >>> predictor(["a gripping film"])[0]["label"]  # doctest: +SKIP
        'positive'
    """

    def __init__(self, saved_model_dir: str | os.PathLike, signature: str | None = None):
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (registers the TF-Text ops the tokenizers use)

        self.path = find_saved_model(saved_model_dir)
        try:
            loaded = tf.saved_model.load(str(self.path))
        except Exception as error:  # noqa: BLE001  (protobuf, OS and TF errors of a broken SavedModel)
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise PredictInputError(f"cannot load the SavedModel {str(self.path)!r}: {first_line}") from None
        self._loaded = loaded  # keeps the signatures' variables alive
        signatures = dict(loaded.signatures)
        self.signature_name, self.task, self.input_names = self._choose(signatures, signature)
        self.signature = signatures[self.signature_name]
        self.takes_language = LANGUAGE_INPUT in self.signature.structured_input_signature[1]
        self.metadata = self._read_json(self.path / "assets.extra" / METADATA_FILE)
        tokenizer_config = self._read_json(self.path / "assets.extra" / "tokenizer" / "tokenizer_config.json")
        self.mask_token: str | None = (tokenizer_config.get("special_tokens") or {}).get("mask")

    def _choose(self, signatures: dict, name: str | None) -> tuple[str, str, tuple[str, ...]]:
        text_signatures = [key for key, value in sorted(signatures.items()) if _string_inputs(value) is not None]
        if name is not None:
            if name not in signatures:
                raise PredictInputError(f"{str(self.path)!r} has no signature {name!r}; it has "
                                        f"{', '.join(sorted(signatures)) or 'none'}")
            chosen = signatures[name]
            inputs = _string_inputs(chosen)
            if inputs is None:
                raise PredictInputError(f"signature {name!r} {_describe(chosen)}, not text; the signatures that take "
                                        f"text are {', '.join(text_signatures) or 'none'}")
            task = signature_task(chosen)
            if task is None:
                raise PredictInputError(f"signature {name!r} is not a tfbert signature: it {_describe(chosen)}")
            return name, task, inputs
        default = signatures.get("serving_default")
        task = signature_task(default) if default is not None else None
        inputs = _string_inputs(default) if default is not None else None
        if task is None or inputs is None:
            found = f"its serving_default {_describe(default)}" if default is not None else \
                f"its signatures are {', '.join(sorted(signatures)) or 'none'}"
            raise PredictInputError(f"{str(self.path)!r} has no tfbert serving signature ({found}); predict runs "
                                    f"SavedModels written by tfbert export ({SERVING_TASKS})")
        return "serving_default", task, inputs

    @staticmethod
    def _read_json(path: Path) -> dict:
        try:
            return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except (OSError, ValueError):
            return {}

    @property
    def top_k_available(self) -> int | None:
        """Tokens the export returns per mask (fill-mask), fixed when it was exported."""
        if self.task != "fill_mask":
            return None
        return int(self.signature.structured_outputs["token_ids"].shape[-1])

    def examples(self, texts: Sequence[str | tuple[str, str]], first: str | None = None) -> list[tuple[str, ...]]:
        """Each text as a tuple of the signature's inputs: `(text,)`, or a pair from a tuple, `FIRST<TAB>SECOND`
        or `first` (the same `text_pair` / `question` for every text)."""
        from tfbert.data.text_lists import text_list

        texts = text_list(texts, allow_tuples=True)
        width = len(self.input_names)
        if first is not None and width != 2:
            raise PredictInputError(f"this {self.task} model takes one text per example, not pairs")
        if self.task == "multiple_choice":
            if first is not None:
                raise PredictInputError("this multiple_choice model takes each example whole: "
                                        "CONTEXT<TAB>CHOICE<TAB>CHOICE...")
            return self._choice_examples(texts)
        examples = []
        for number, text in enumerate(texts, 1):
            if isinstance(text, (tuple, list)):
                parts = tuple(str(part) for part in text)
            elif width == 1:
                parts = (text,)
            elif first is not None:
                parts = (first, text) if self.input_names[0] == "question" else (text, first)
            else:
                parts = tuple(text.split("\t", 1))
            if len(parts) != width:
                raise PredictInputError(f"text {number} ({_shorten(str(text), 40)!r}): {self._expected()}")
            examples.append(parts)
        if self.task == "fill_mask" and self.mask_token:
            for number, (text,) in enumerate(examples, 1):
                if self.mask_token not in text:
                    raise PredictInputError(
                        f"text {number} ({_shorten(text, 40)!r}) has no mask token: write {self.mask_token} where the "
                        f"model should fill in a word, e.g. 'paris is the {self.mask_token} of france.'")
        return examples

    @staticmethod
    def _choice_examples(texts: Sequence) -> list[tuple[str, tuple[str, ...]]]:
        """Multiple choice: each example as `(context, choices)`, from a `(context, [choice, ...])` pair or
        `CONTEXT<TAB>CHOICE<TAB>CHOICE...`."""
        examples = []
        for number, text in enumerate(texts, 1):
            if isinstance(text, (tuple, list)):
                parts = [str(text[0]), *(str(choice) for choice in text[1])] if len(text) == 2 else []
            else:
                parts = str(text).split("\t")
            if len(parts) < 3:
                raise PredictInputError(
                    f"text {number} ({_shorten(str(text), 40)!r}): this multiple_choice model takes a context and "
                    "two or more choices; give each example as CONTEXT<TAB>CHOICE<TAB>CHOICE...")
            examples.append((parts[0], tuple(parts[1:])))
        return examples

    def _language_column(self, language: str | None, rows: int):
        """The `language` input (`language` for every row), after checking the model takes one."""
        import tensorflow as tf

        names = self.metadata.get("languages") or []
        known = ", ".join(names) or "see the export's tfbert_export.json"
        if self.takes_language and language is None:
            raise PredictInputError(f"this {self.task} model has language embeddings: pass --language NAME "
                                    f"(one of: {known})")
        if self.takes_language and names and language not in names:
            raise PredictInputError(f"--language {language!r} is not one of this model's languages: {known}")
        if not self.takes_language and language is not None:
            raise PredictInputError(f"--language {language!r}: this {self.task} model takes no language (only XLM "
                                    "exports with language embeddings do)")
        return {LANGUAGE_INPUT: tf.constant([language.encode("utf-8")] * rows)} if self.takes_language else {}

    def _batches(self, examples: list, batch_size: int) -> Iterable[list]:
        """`batch_size` examples at a time; multiple choice also starts a batch where the number of choices
        changes (a request holds `[batch, choices]` strings)."""
        batch: list = []
        for example in examples:
            if batch and (len(batch) == batch_size or
                          (self.task == "multiple_choice" and len(example[1]) != len(batch[0][1]))):
                yield batch
                batch = []
            batch.append(example)
        if batch:
            yield batch

    def _expected(self) -> str:
        names = " and ".join(self.input_names)
        if len(self.input_names) != 2:
            return f"this {self.task} model takes {names}"
        option = "--question once for every context" if self.input_names[0] == "question" else \
            "--text-pair once for every text"
        return (f"this {self.task} model takes {names}; give each example as "
                f"{self.input_names[0].upper()}<TAB>{self.input_names[1].upper()}, or pass {option}")

    def __call__(self, texts: Sequence[str | tuple[str, str]], *, top_k: int | None = 5, first: str | None = None,
                 batch_size: int = 32, progress=None, language: str | None = None) -> list[dict]:
        """One dict per text (see `predict_texts`); `progress(done, total)` is called after each batch;
        `language` is every example's language for XLM exports that take one."""
        import numpy as np
        import tensorflow as tf

        if top_k is not None and top_k < 1:
            raise PredictInputError(f"--top-k {top_k}: give 1 or more")
        if batch_size < 1:
            raise PredictInputError(f"--batch-size {batch_size}: give 1 or more")
        examples = self.examples(texts, first)
        if not examples:
            raise PredictInputError("no input text")
        self._language_column(language, 0)
        records: list[dict] = []
        for batch in self._batches(examples, batch_size):
            columns = {name: tf.constant(_utf8([example[index] for example in batch]), tf.string)
                       for index, name in enumerate(self.input_names)}
            columns.update(self._language_column(language, len(batch)))
            outputs = {name: value.numpy() for name, value in self.signature(**columns).items()}
            for row, example in enumerate(batch):
                record = {name: list(value) if isinstance(value, tuple) else value
                          for name, value in zip(self.input_names, example)}
                if language is not None:
                    record[LANGUAGE_INPUT] = language
                record["task"] = self.task
                record.update(self._decode(outputs, row, example, top_k, np))
                records.append(record)
            if progress is not None:
                progress(len(records), len(examples))
        return records

    def _decode(self, outputs: dict, row: int, example: tuple[str, ...], top_k: int | None, np) -> dict:
        task = self.task
        if task == "fill_mask":
            masks = []
            for slot, position in enumerate(outputs["mask_positions"][row]):
                if position < 0:
                    continue
                predictions = [{"token": _text(token), "token_id": int(token_id), "score": float(score)}
                               for token, token_id, score in zip(outputs["tokens"][row, slot],
                                                                 outputs["token_ids"][row, slot],
                                                                 outputs["scores"][row, slot])]
                masks.append({"position": int(position), "predictions": predictions[:top_k]})
            return {"masks": masks}
        if task == "multiple_choice":
            choice_id = int(outputs["choice_id"][row])
            return {"choice": example[1][choice_id], "choice_id": choice_id,
                    "probabilities": [float(value) for value in outputs["probabilities"][row]]}
        if task == "classification":
            probabilities = outputs["probabilities"][row]
            names = self.metadata.get("label_names") or [str(index) for index in range(len(probabilities))]
            if len(names) != len(probabilities):
                names = [str(index) for index in range(len(probabilities))]
            return {"label": _text(outputs["label"][row]), "label_id": int(outputs["label_id"][row]),
                    "probabilities": {name: float(value) for name, value in zip(names, probabilities)}}
        if task == "regression":
            return {"score": float(np.reshape(outputs["score"][row], [-1])[0])}
        if task == "embedding":
            return {"embedding": [float(value) for value in outputs["embedding"][row]]}
        if task == "tagging":
            text = example[0]
            pieces = []
            for token, tag, start, end in zip(outputs["tokens"][row], outputs["tags"][row], outputs["start"][row],
                                              outputs["end"][row]):
                if start < 0:
                    continue
                pieces.append({"token": _text(token), "tag": _text(tag), "start": int(start), "end": int(end),
                               "text": text[int(start):int(end)]})
            return {"tokens": pieces}
        if task == "question_answering":
            answer = {"answer": _text(outputs["answer"][row]), "start": int(outputs["start"][row]),
                      "end": int(outputs["end"][row]), "score": float(outputs["score"][row])}
            if "no_answer_score" in outputs:
                answer["no_answer_score"] = float(outputs["no_answer_score"][row])
            return answer
        if task == "tokenize":
            length = int(outputs["lengths"][row])
            return {"token_ids": [int(value) for value in outputs["token_ids"][row, :length]]}
        # preprocess: the packed ids, without the padding
        length = int(np.sum(outputs["input_mask"][row]))
        return {name: [int(value) for value in outputs[name][row, :length]]
                for name in ("input_word_ids", "input_type_ids")}


def predict_texts(saved_model_dir: str | os.PathLike, texts: Sequence[str | tuple[str, str]], top_k: int | None = 5,
                  *, signature: str | None = None, first: str | None = None, batch_size: int = 32,
                  language: str | None = None) -> list[dict]:
    """Runs a `tfbert export` SavedModel on `texts`: one dict per text with its inputs, `task` and the results.

    | task | keys |
    |---|---|
    | `fill_mask` | `masks`: `[{"position", "predictions": [{"token", "token_id", "score"}] * top_k}]` |
    | `classification` | `label`, `label_id`, `probabilities` (`{label name: probability}`) |
    | `regression` | `score` |
    | `embedding` | `embedding` (list of floats) |
    | `tagging` | `tokens`: `[{"token", "tag", "start", "end", "text"}]` (character offsets) |
    | `question_answering` | `answer`, `start`, `end`, `score` (+ `no_answer_score`) |
    | `multiple_choice` | `choice`, `choice_id`, `probabilities` (one per choice) |

    `saved_model_dir` is a version folder or a model folder (its highest version). Pair models take
    `(first, second)` tuples, `"FIRST\\tSECOND"` strings, or `first` for every text; multiple choice
    `(context, [choice, ...])` or `"CONTEXT\\tCHOICE\\tCHOICE..."`. XLM exports with language
    embeddings need `language` (one of the export's names, for every text). Raises
    `FileNotFoundError` / `PredictInputError` (a `ValueError`) on bad input.
    """
    return Predictor(saved_model_dir, signature)(texts, top_k=top_k, first=first, batch_size=batch_size,
                                                 language=language)


def _utf8(values: Sequence) -> list:
    """Strings as UTF-8 bytes, keeping the nesting (multiple choice's `[batch, choices]`)."""
    return [_utf8(value) if isinstance(value, (tuple, list)) else _utf8_bytes(value) for value in values]


def _utf8_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise PredictInputError(f"text {_shorten(text, 40)!r} holds the lone surrogate U+{ord(text[error.start]):04X} "
                                "(bytes that were not UTF-8); give UTF-8 text") from None


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _shorten(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def format_record(record: dict, values: int = 6) -> list[str]:
    """Human-readable lines for one `predict_texts` dict: the input, then its results indented."""
    task = record["task"]
    if "question" in record:
        lines = [f"Q: {_shorten(record['question'])}", f"C: {_shorten(record['context'])}"]
    elif "choices" in record:
        lines = [f"C: {_shorten(record['context'])}"]
    elif "text_pair" in record:
        lines = [f"{_shorten(record['text'], 60)}  |  {_shorten(record['text_pair'], 60)}"]
    else:
        lines = [_shorten(record["text"])]
    if task == "fill_mask":
        if not record["masks"]:
            lines.append("  no mask token found (within the export's sequence length)")
        for number, mask in enumerate(record["masks"], 1):
            guesses = "  ".join(f"{p['token']} {p['score']:.4f}" for p in mask["predictions"])
            lines.append(f"  mask {number}: {guesses}")
    elif task == "multiple_choice":
        lines.extend(f"  {'*' if index == record['choice_id'] else ' '} {probability:.4f}  {_shorten(choice, 80)}"
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


def _write_output(records: list[dict], output: str, task: str) -> str:
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".npy":
        import numpy as np

        vectors = np.asarray([record["embedding"] for record in records], dtype=np.float32)
        np.save(path, vectors)
        return f"wrote {output}: {vectors.shape[0]} embeddings of {vectors.shape[1]} values"
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return f"wrote {output}: {len(records)} {task} predictions, a JSON object a line"


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
        texts = read_texts(args.texts, args.file)
        predictor = Predictor(args.saved_model, args.signature)
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
            print(_write_output(records, args.output, predictor.task))
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
"""


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `predict` subcommand to `tfbert`'s subparsers."""
    predict = add_command(
        commands, "predict", "run a SavedModel from tfbert export on texts (arguments, --file or stdin)",
        "Run a SavedModel written by tfbert export on raw texts and print its predictions. The task (fill-mask, "
        "classification, regression, embeddings, token classification, question answering) is read from the "
        "SavedModel's serving_default signature. Pair models take each example as FIRST<TAB>SECOND, or "
        "--text-pair / --question once for every text. Embeddings print their size and first values; --json "
        "(one JSON object a line) or --output give the full vectors.",
        EXAMPLES)
    predict.add_argument("saved_model", help="the export: saved_models/NAME/VERSION, or saved_models/NAME (its "
                                             "highest version)")
    predict.add_argument("texts", nargs="*", help="texts to run; '-' (or none, with stdin not a terminal) reads "
                                                  "stdin, a text a line")
    predict.add_argument("--file", help="a UTF-8 file with one text a line (blank lines skipped)")
    predict.add_argument("--top-k", type=flag_types.positive_int, default=5,
                         help="fill-mask: tokens shown per mask (default 5, at most what the export returns)")
    predict.add_argument("--json", action="store_true", help="print one JSON object a line (full embedding vectors)")
    predict.add_argument("--output", help="write every prediction to FILE.jsonl, or embeddings to FILE.npy "
                                          "([texts, size] float32)")
    predict.add_argument("--question", help="question answering: the question asked of every text (the contexts)")
    predict.add_argument("--text-pair", help="pair models: the second text of every example")
    predict.add_argument("--signature", help="the signature to run (default serving_default; tokenize and "
                                             "preprocess also take text)")
    predict.add_argument("--batch-size", type=flag_types.positive_int, default=32, help="texts per call (default 32)")
    predict.add_argument("--language", help="XLM exports with language embeddings: the language of every text "
                                            "(one of the names the export lists)")
    predict.set_defaults(run=run, intermixed="texts")
    return predict
