"""The one client of a tfbert export: load a SavedModel written by `tfbert export` (or reach one on TF
Serving), read its task from the signature's outputs, and run it on texts for one dict per text.

    docker run -p 8501:8501 -p 8500:8500 -v $PWD/saved_models/sst2:/models/sst2 -e MODEL_NAME=sst2 tensorflow/serving:2.21.0
    python -m tfbert.export.client --model sst2 "a gripping film" "a dull film"
    python -m tfbert.export.client --model sst2 --format inputs "a gripping film"
    python -m tfbert.export.client --model sst2 --format grpc "a gripping film"      # needs tensorflow-serving-api
    python -m tfbert.export.client --model squad --input question="Who wrote it?" --input context="Ada wrote it."

`tfbert predict` (a local export), `tfbert.inference.text_models` (exported embedders and
cross-encoders) and the command above (a model server) all run exports through `SavedModelClient`.
Where the model runs is a `tfbert.export.signatures` source: a local folder, a `RestServer` or a
`GrpcServer`. A server does not send the export's `assets.extra` files: classification
probabilities are keyed by label id, and fill-mask texts are not checked for the mask token.

Example:
    >>> from tfbert.export.signatures import RestServer
    >>> server = RestServer("sst2", "http://localhost:8501")   # nothing is sent until the client asks
    >>> server.address, server.body_format
    ('localhost:8501', 'instances')
    >>> SavedModelClient(server)(["a gripping film"])[0]["label"]  # doctest: +SKIP
    'positive'
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from tfbert.artifacts.files import check_label_count, read_export_metadata, read_tokenizer_settings
from tfbert.artifacts.layout import SAVED_MODEL_EXTRA, TOKENIZER_FOLDER
from tfbert.artifacts.saved_models import resolve_saved_model
from tfbert.export.records import decode
from tfbert.export.signatures import GrpcServer, LoadedSavedModel, RestServer, Signature, local_signatures
from tfbert.export.tflite_model import TFLiteExport, is_tflite_export

# Where an export runs, other than a folder: TF Serving over REST or gRPC, one loaded in this process, or a
# TF Lite export's interpreter.
Source = RestServer | GrpcServer | LoadedSavedModel | TFLiteExport

if TYPE_CHECKING:
    import numpy as np

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
SERVING_TASKS = ("fill-mask, classification, regression, embeddings, token classification, question answering, "
                 "multiple choice")


class PredictInputError(ValueError):
    """Bad arguments or input for a `SavedModelClient` (and `tfbert predict`), reported as one line."""


def signature_task(signature: Signature) -> str | None:
    """The tfbert task a signature computes, from its output names; None when it is none of them."""
    outputs = set(signature.output_shapes)
    return next((task for task, names in TASK_OUTPUTS if names <= outputs), None)


def _string_inputs(signature: Signature) -> tuple[str, ...] | None:
    """The signature's input names in example order (without `language`), or None when it does not take
    strings only."""
    dtypes = signature.input_dtypes
    if not dtypes or any(dtype != "string" for dtype in dtypes.values()):
        return None
    names = {name for name in dtypes if name != LANGUAGE_INPUT}
    return next((order for order in INPUT_ORDERS if set(order) == names), tuple(sorted(names)))


def _version_folder(path: str | os.PathLike) -> Path:
    """`path` if it is a SavedModel, else its highest version folder (`tfbert.artifacts.resolve_saved_model`)."""
    try:
        return resolve_saved_model(path)
    except ValueError as error:
        raise PredictInputError(str(error)) from None


def _load_local(folder: Path) -> dict[str, Signature]:
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the TF-Text ops the tokenizers use)

    try:
        loaded = tf.saved_model.load(str(folder))
    except Exception as error:  # noqa: BLE001  (protobuf, OS and TF errors of a broken SavedModel)
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PredictInputError(f"cannot load the SavedModel {str(folder)!r}: {first_line}") from None
    return local_signatures(loaded)


class SavedModelClient:
    """A tfbert export and the signature it runs; call it on texts for one dict per example.

    `source` is a SavedModel folder (a version folder, or `NAME/` for its highest version), a TF Lite
    export's folder (`tfbert.export.tflite_model`, run on `threads` threads), a `RestServer` / `GrpcServer`
    naming a model on TF Serving, or a `LoadedSavedModel`. `signature` defaults to `serving_default`
    (`tokenize` and `preprocess` also take text, in SavedModels). See `predict_texts` for the dicts.

    Example:
        >>> client = SavedModelClient("saved_models/sst2")
        >>> client.task, client.input_names
        ('classification', ('text',))
        >>> sorted(client(["a gripping film"])[0]["probabilities"])     # "label": the likelier
        ['negative', 'positive']
        >>> client.outputs({"text": ["a gripping film"]})["probabilities"].shape
        (1, 2)
    """

    def __init__(self, source: str | os.PathLike | Source, signature: str | None = None, *,
                 threads: int | None = None):
        if not isinstance(source, Source) and is_tflite_export(source):
            source = TFLiteExport(source, threads)
        elif threads is not None:
            raise PredictInputError(f"threads (--threads) {threads}: only a TF Lite export's interpreter takes a "
                                    "thread count (tfbert export --format tflite); a SavedModel runs on TensorFlow's "
                                    "thread pools")
        if isinstance(source, Source):
            self.path = source.label
            signatures, extra = source.signatures(), source.extra if isinstance(source, TFLiteExport) else None
        else:
            folder = _version_folder(source)
            self.path, signatures, extra = folder, _load_local(folder), folder / SAVED_MODEL_EXTRA
        self.signature_name, self.task, self.input_names = self._choose(signatures, signature)
        self.signature = signatures[self.signature_name]
        self.takes_language = LANGUAGE_INPUT in self.signature.input_dtypes
        self.metadata = read_export_metadata(extra) if extra else {}
        if self.task == "classification" and extra:
            check_label_count(self.metadata, extra, (self.signature.output_shapes.get("logits") or (None,))[-1])
        tokenizer_config = read_tokenizer_settings(extra / TOKENIZER_FOLDER) if extra else {}
        self.mask_token: str | None = (tokenizer_config.get("special_tokens") or {}).get("mask")

    def _choose(self, signatures: dict[str, Signature], name: str | None) -> tuple[str, str, tuple[str, ...]]:
        text_signatures = [key for key, value in sorted(signatures.items()) if _string_inputs(value) is not None]
        if name is not None:
            if name not in signatures:
                raise PredictInputError(f"{str(self.path)!r} has no signature {name!r}; it has "
                                        f"{', '.join(sorted(signatures)) or 'none'}")
            chosen = signatures[name]
            inputs = _string_inputs(chosen)
            if inputs is None:
                raise PredictInputError(f"signature {name!r} {chosen.describe()}, not text; the signatures that "
                                        f"take text are {', '.join(text_signatures) or 'none'}")
            task = signature_task(chosen)
            if task is None:
                raise PredictInputError(f"signature {name!r} is not a tfbert signature: it {chosen.describe()}")
            return name, task, inputs
        default = signatures.get("serving_default")
        task = signature_task(default) if default is not None else None
        inputs = _string_inputs(default) if default is not None else None
        if task is None or inputs is None:
            found = f"its serving_default {default.describe()}" if default is not None else \
                f"its signatures are {', '.join(sorted(signatures)) or 'none'}"
            raise PredictInputError(f"{str(self.path)!r} has no tfbert serving signature ({found}); SavedModelClient "
                                    f"runs SavedModels written by tfbert export ({SERVING_TASKS})")
        return "serving_default", task, inputs

    @property
    def top_k_available(self) -> int | None:
        """Tokens the export returns per mask (fill-mask), fixed when it was exported."""
        if self.task != "fill_mask":
            return None
        shape = self.signature.output_shapes["token_ids"]
        return shape[-1] if shape else None

    def outputs(self, columns: dict[str, Sequence]) -> dict[str, np.ndarray]:
        """One call of the signature: `{input name: texts}` to `{output name: numpy array}`."""
        return self.signature.call({name: _utf8(values) for name, values in columns.items()})

    def examples(self, texts: Sequence[str | tuple[str, str]], first: str | None = None) -> list[tuple[str, ...]]:
        """Each text as a tuple of the signature's inputs: `(text,)`, or a pair from a tuple, `FIRST<TAB>SECOND`
        or `first` (the same `text_pair` / `question` for every text)."""
        # Deferred (start-up): `tfbert.data.text_lists` imports TensorFlow, kept out of `tfbert --help`
        from tfbert.data.text_lists import text_list

        texts = text_list(texts, allow_tuples=True)
        width = len(self.input_names)
        if first is not None and width != 2:
            raise PredictInputError(f"this {self.task} model takes one text per example, not pairs")
        if self.task == "multiple_choice":
            if first is not None:
                raise PredictInputError("this multiple_choice model takes each example whole: "
                                        "CONTEXT<TAB>CHOICE<TAB>CHOICE...")
            return _choice_examples(texts)
        examples = [self._example(number, text, width, first) for number, text in enumerate(texts, 1)]
        if self.task == "fill_mask" and self.mask_token:
            for number, (text,) in enumerate(examples, 1):
                if self.mask_token not in text:
                    raise PredictInputError(
                        f"text {number} ({shorten(text, 40)!r}) has no mask token: write {self.mask_token} where the "
                        f"model should fill in a word, e.g. 'paris is the {self.mask_token} of france.'")
        return examples

    def _example(self, number: int, text, width: int, first: str | None) -> tuple[str, ...]:
        if isinstance(text, (tuple, list)):
            parts = tuple(str(part) for part in text)
        elif width == 1:
            parts = (text,)
        elif first is not None:
            parts = (first, text) if self.input_names[0] == "question" else (text, first)
        else:
            parts = tuple(text.split("\t", 1))
        if len(parts) != width:
            raise PredictInputError(f"text {number} ({shorten(str(text), 40)!r}): {self._expected()}")
        return parts

    def _language_column(self, language: str | None, rows: int) -> dict[str, list[str]]:
        """The `language` input (`language` for every row), after checking the model takes one."""
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
        return {LANGUAGE_INPUT: [language] * rows} if self.takes_language else {}

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
            columns = {name: [example[index] for example in batch] for index, name in enumerate(self.input_names)}
            outputs = self.outputs({**columns, **self._language_column(language, len(batch))})
            for row, example in enumerate(batch):
                record = {name: list(value) if isinstance(value, tuple) else value
                          for name, value in zip(self.input_names, example)}
                if language is not None:
                    record[LANGUAGE_INPUT] = language
                record["task"] = self.task
                record.update(decode(self.task, outputs, row, example, top_k, self.metadata.get("label_names")))
                records.append(record)
            if progress is not None:
                progress(len(records), len(examples))
        return records


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
                f"text {number} ({shorten(str(text), 40)!r}): this multiple_choice model takes a context and "
                "two or more choices; give each example as CONTEXT<TAB>CHOICE<TAB>CHOICE...")
        examples.append((parts[0], tuple(parts[1:])))
    return examples


def predict_texts(source: str | os.PathLike | Source, texts: Sequence[str | tuple[str, str]],
                  top_k: int | None = 5, *, signature: str | None = None, first: str | None = None,
                  batch_size: int = 32, language: str | None = None, threads: int | None = None) -> list[dict]:
    """Runs a `tfbert export` SavedModel (or TF Lite export) on `texts`: one dict per text with its inputs, `task`
    and the results.

    | task | keys |
    |---|---|
    | `fill_mask` | `masks`: `[{"position", "predictions": [{"token", "token_id", "score"}] * top_k}]` |
    | `classification` | `label`, `label_id`, `probabilities` (`{label name: probability}`) |
    | `regression` | `score` |
    | `embedding` | `embedding` (list of floats) |
    | `tagging` | `tokens`: `[{"token", "tag", "start", "end", "text"}]` (character offsets) |
    | `question_answering` | `answer`, `start`, `end`, `score` (+ `no_answer_score`) |
    | `multiple_choice` | `choice`, `choice_id`, `probabilities` (one per choice) |

    `source` is a version folder, a model folder (its highest version), a TF Lite export's folder (run on
    `threads` threads), or a `RestServer` / `GrpcServer`. Pair models take `(first, second)` tuples, `"FIRST\\tSECOND"` strings, or `first`
    for every text; multiple choice `(context, [choice, ...])` or `"CONTEXT\\tCHOICE\\tCHOICE..."`.
    XLM exports with language embeddings need `language` (one of the export's names, for every
    text). Raises `FileNotFoundError` / `PredictInputError` (a `ValueError`) on bad input.

    Example:
        >>> (record,) = predict_texts("saved_models/fill_mask", ["paris is the [MASK] of france."], top_k=2)
        >>> record["masks"][0]["position"], len(record["masks"][0]["predictions"])
        (4, 2)
    """
    return SavedModelClient(source, signature, threads=threads)(texts, top_k=top_k, first=first,
                                                                batch_size=batch_size, language=language)


def _utf8(values: Sequence) -> list:
    """Strings as UTF-8 bytes, keeping the nesting (multiple choice's `[batch, choices]`)."""
    return [_utf8(value) if isinstance(value, (tuple, list)) else _utf8_bytes(value) for value in values]


def _utf8_bytes(text: str | bytes) -> bytes:
    if isinstance(text, bytes):
        return text
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise PredictInputError(f"text {shorten(text, 40)!r} holds the lone surrogate U+{ord(text[error.start]):04X} "
                                "(bytes that were not UTF-8); give UTF-8 text") from None


def shorten(text: str, width: int = 100) -> str:
    """`text` on one line, cut to `width` characters with `…`.

    Example:
        >>> shorten("a  long\\ntext", 8)
        'a long …'
    """
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _parse_examples(args: argparse.Namespace, client: SavedModelClient) -> list:
    """The texts, or the `--input NAME=VALUE` columns as one tuple per example in the signature's order."""
    columns: dict[str, list[str]] = {}
    for item in args.input or []:
        name, separator, value = item.partition("=")
        if not separator:
            raise PredictInputError(f"--input {item!r}: expected NAME=VALUE")
        columns.setdefault(name, []).append(value)
    if not columns:
        return list(args.texts)
    if args.texts:
        columns.setdefault("text", []).extend(args.texts)
    if set(columns) != set(client.input_names):
        raise PredictInputError(f"--input gave {', '.join(sorted(columns))}; this {client.task} model takes "
                                f"{', '.join(client.input_names)}")
    return list(zip(*(columns[name] for name in client.input_names)))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m tfbert.export.client`: a model on TF Serving on texts, one JSON object per text."""
    parser = argparse.ArgumentParser(prog="python -m tfbert.export.client", description=__doc__.split("\n")[0])
    parser.add_argument("texts", nargs="*", help="the examples: TEXT, FIRST<TAB>SECOND or CONTEXT<TAB>CHOICE...")
    parser.add_argument("--input", action="append", help="NAME=VALUE for each input instead (text_pair, question, "
                                                         "context), repeated once per example")
    parser.add_argument("--model", required=True, help="MODEL_NAME the server was started with")
    parser.add_argument("--signature", default="serving_default")
    parser.add_argument("--format", choices=["instances", "inputs", "grpc"], default="instances",
                        help="REST row format, REST columnar format, or gRPC")
    parser.add_argument("--rest-address", default="localhost:8501")
    parser.add_argument("--grpc-address", default="localhost:8500")
    parser.add_argument("--version", type=int, help="a version the server has loaded (default: its latest)")
    parser.add_argument("--language", help="XLM exports with language embeddings: the language of every text")
    args = parser.parse_args(argv)
    if not args.texts and not args.input:
        parser.error("give texts, or --input NAME=VALUE (repeatable)")
    server = GrpcServer(args.model, args.grpc_address, version=args.version) if args.format == "grpc" else \
        RestServer(args.model, args.rest_address, args.format, version=args.version)
    try:
        client = SavedModelClient(server, args.signature)
        records = client(_parse_examples(args, client), language=args.language)
    except (ConnectionError, ValueError) as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    for record in records:
        print(json.dumps(record, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
