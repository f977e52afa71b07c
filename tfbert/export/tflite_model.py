"""A TF Lite export (`tfbert.export.tflite`) run on texts: the `SavedModelClient` source of `tfbert predict`.

`TFLiteExport(folder)` reads the folder's `Preprocessor` (`preprocessor.json`, `tokenizer/`) and
`model.tflite`. A call packs the texts with that preprocessor in TensorFlow (the code a SavedModel's
`serving_default` and `preprocess` signatures are built from), cuts the batch to its longest text, runs
the model in a TF Lite interpreter with XNNPACK on `threads` threads and adds `label` (classification)
from the label names the folder records. The interpreter is `ai_edge_litert`'s (LiteRT, the supported
runtime) where that package is installed, else TensorFlow's `tf.lite.Interpreter`.

Example:
    >>> from tfbert.export import SavedModelClient
    >>> source = TFLiteExport("tflite/sst2", threads=1)        # tfbert export runs/sst2 --format tflite
    >>> source.task, source.input_names
    ('classification', ('text',))
    >>> SavedModelClient(source)(["a gripping film"])[0]["label"] in ("negative", "positive")
    True
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import numpy as np

from tfbert.artifacts import folder_kind
from tfbert.artifacts.checks import FileContentError, check_tokenizer_fits
from tfbert.artifacts.files import check_label_count, read_export_metadata
from tfbert.artifacts.layout import EXPORT_METADATA_FILE, PREPROCESSOR_FILE, TOKENIZER_FOLDER
from tfbert.artifacts.layout import TFLITE_MODEL_FILE as MODEL_FILE
from tfbert.artifacts.manifest import read_manifest
from tfbert.export.signatures import Signature, StringColumns
from tfbert.native_stderr import filtered_native_stderr

if TYPE_CHECKING:
    from tfbert.data.preprocessor import Preprocessor

# What `tfbert.export.tflite` writes, named here, where no TensorFlow is imported to read them.
KIND = "tflite-export"
SIGNATURE = "serving_default"
# `export_tflite`'s `quantize` values and what each stores.
QUANTIZATIONS = {"dynamic": "int8 weights, float32 activations (TF Lite dynamic-range quantization)"}
# What TF Lite's C++ logger prints to stderr when the first allocation applies XNNPACK, on every load.
XNNPACK_NOTICE = "INFO: Created TensorFlow Lite XNNPACK delegate for CPU."
# The outputs the loader adds to the model's, as SavedModels return them: the label's name.
STRING_OUTPUTS = {"classification": "label"}


def is_tflite_export(path: str | os.PathLike) -> bool:
    """Whether `path` is a folder `export_tflite` wrote (its manifest says `tflite-export`)."""
    return folder_kind(path) == KIND


def new_interpreter(model_file: str | os.PathLike, threads: int):
    """A TF Lite interpreter of `model_file` on `threads` threads, XNNPACK applied (the default delegate):
    LiteRT's (`ai_edge_litert`) where installed, else `tf.lite.Interpreter`, whose deprecation warning points
    to LiteRT (silenced here: LiteRT is used whenever it is there)."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        import tensorflow as tf

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*tf.lite.Interpreter is deprecated")
            return tf.lite.Interpreter(model_path=str(model_file), num_threads=threads)
    return Interpreter(model_path=str(model_file), num_threads=threads)


def allocate_quietly(interpreter) -> None:
    """`interpreter.allocate_tensors()` without `XNNPACK_NOTICE`, which the first allocation prints from C++ (no
    setting reachable from Python silences it; `tfbert.native_stderr` holds it back)."""
    with filtered_native_stderr(lambda line: line.strip() == XNNPACK_NOTICE):
        interpreter.allocate_tensors()


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; all of them where the platform cannot say)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # macOS, Windows
        return os.cpu_count() or 1


def interpreter_threads(requested: int | None = None) -> tuple[int, str | None]:
    """The interpreter's thread count for `requested` (None: every usable core), capped at the usable cores, and
    a note where it was capped: more threads than cores only queue on them, and TF Lite aborts the whole process
    when it cannot start them (`pthread_create failed` at 100,000).

    Example:
        >>> interpreter_threads(10**5)[1]  # doctest: +SKIP
        'threads 100000 is more than the 2 cores this process may run on: the interpreter runs on 2'
    """
    cores = usable_cores()
    if requested is None or requested <= cores:
        return requested or cores, None
    return cores, f"threads {requested} is more than the {cores} cores this process may run on: the interpreter " \
                  f"runs on {cores}"


class TFLiteExport:
    """A TF Lite export folder as a `SavedModelClient` source (see the module notes).

    `threads`: the interpreter's threads, by default every core this process may run on, and never more
    (`interpreter_threads`; `threads_note` says so where it capped them). Calls from several threads take
    turns (an interpreter runs one call at a time).
    """

    def __init__(self, folder: str | os.PathLike, threads: int | None = None):
        # Deferred (start-up): `tfbert.data.preprocessor` imports TensorFlow, kept out of `tfbert --help`
        from tfbert.data.preprocessor import Preprocessor

        self.folder = Path(folder)
        if not is_tflite_export(self.folder):
            raise ValueError(f"{str(self.folder)!r} is not a TF Lite export (no tfbert.json of kind tflite-export); "
                             "give the folder tfbert export --format tflite wrote")
        if threads is not None and threads < 1:
            raise ValueError(f"threads {threads}: give 1 or more")
        self.metadata = read_export_metadata(self.folder)
        if not self.metadata:
            raise FileContentError(self.folder / EXPORT_METADATA_FILE, None, "is missing",
                                   "export the model again (tfbert export SOURCE --format tflite)")
        self.task = self.metadata["task"]
        self.input_names = tuple(self.metadata["inputs"])
        self._label_names = np.array([name.encode("utf-8") for name in self.metadata.get("label_names") or ()],
                                     dtype=object)
        self.preprocessor = Preprocessor.load(self.folder)
        config = (read_manifest(self.folder) or {}).get("config") or {}
        check_tokenizer_fits(self.preprocessor.tokenizer.vocabulary_size(), self.preprocessor.sequence_length,
                             config, f"{self.folder / TOKENIZER_FOLDER} ({PREPROCESSOR_FILE})", str(self.folder))
        self.threads, self.threads_note = interpreter_threads(threads)
        runner = self._load_interpreter()
        self._inputs = {name: detail["index"] for name, detail in runner.get_input_details().items()}
        self._outputs = {name: detail["index"] for name, detail in runner.get_output_details().items()}
        self._output_shapes = {name: tuple(None if size < 0 else int(size) for size in detail["shape_signature"])
                               for name, detail in runner.get_output_details().items()}
        if self.task == "classification":
            check_label_count(self.metadata, self.folder, (self._output_shapes.get("logits") or (None,))[-1])
        self._shape: tuple | None = None
        self._lock = threading.Lock()
        self._pack = _packing_function(self.preprocessor, len(self.input_names))

    def _load_interpreter(self):
        """The interpreter of `model.tflite` and its signature runner; a damaged file is one line naming it."""
        model_file = self.folder / MODEL_FILE
        try:
            self.interpreter = new_interpreter(model_file, self.threads)
            allocate_quietly(self.interpreter)   # before the signature runner, which holds the interpreter's tensors
            return self.interpreter.get_signature_runner(SIGNATURE)
        except (ValueError, RuntimeError) as error:
            first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise FileContentError(model_file, None, f"is not a TF Lite model tfbert can run ({first_line})",
                                   "export the model again (tfbert export SOURCE --format tflite)") from None

    @property
    def label(self) -> str:
        return str(self.folder)

    @property
    def extra(self) -> Path:
        """The folder of the export's `tfbert_export.json` and `tokenizer/` (a SavedModel's `assets.extra/`)."""
        return self.folder

    def encode(self, columns: StringColumns) -> dict[str, np.ndarray]:
        """The model's int32 inputs for `{input name: strings}`: packed, cut to the batch's longest text."""
        import tensorflow as tf

        texts = [tf.constant(list(columns[name]), tf.string) for name in self.input_names]
        return {name: value.numpy() for name, value in self._pack(*texts).items()}

    def run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """`model.tflite` on int32 `token_ids`, `segment_ids`, `padding_mask` `[batch, length]`; its outputs."""
        with self._lock:
            shape = tuple(inputs["token_ids"].shape)
            if shape != self._shape:    # a new shape: the interpreter plans its tensors (and XNNPACK) again
                for index in self._inputs.values():
                    self.interpreter.resize_tensor_input(index, shape)
                self.interpreter.allocate_tensors()
                self._shape = shape
            for name, index in self._inputs.items():
                self.interpreter.set_tensor(index, np.asarray(inputs[name], np.int32))
            self.interpreter.invoke()
            return {name: self.interpreter.get_tensor(index) for name, index in self._outputs.items()}

    def __call__(self, columns: StringColumns) -> dict[str, np.ndarray]:
        """`{input name: strings}` to the task's outputs, named and typed as the SavedModel export's."""
        outputs = self.run(self.encode(columns))
        if self.task == "classification":
            outputs["label"] = self._label_names[outputs["label_id"]]
        return outputs

    def signatures(self) -> dict[str, Signature]:
        """`serving_default`: the task's string inputs to its outputs (`SavedModelClient` reads the task from them)."""
        shapes = dict(self._output_shapes)
        if self.task in STRING_OUTPUTS:
            shapes[STRING_OUTPUTS[self.task]] = (None,)
        return {SIGNATURE: Signature(SIGNATURE, {name: "string" for name in self.input_names}, shapes, self)}


def _packing_function(preprocessor: "Preprocessor", texts: int):
    """`preprocessor.pack` then `trim_padding`, traced once, here, for `texts` string inputs (a text, or a pair).

    A concrete function: a `tf.function` made per loaded export would have TensorFlow warn of "retracing" on
    stderr once a process had loaded five exports, though each traces once.
    """
    import tensorflow as tf

    def pack(*inputs):
        return preprocessor.trim_padding(preprocessor.pack(*inputs))

    signature = [tf.TensorSpec([None], tf.string)] * texts
    return tf.function(pack, input_signature=signature, autograph=False).get_concrete_function()
