"""`export_tflite`: a tfbert model as a TensorFlow Lite folder, for low batch-1 latency on CPUs (XNNPACK).

`OUTPUT_DIR/NAME/` holds:

| file | what |
|---|---|
| `model.tflite` | the task model on int32 `token_ids`, `segment_ids`, `padding_mask` `[batch, length]` (both open), builtin ops only; its `serving_default` signature returns the SavedModel's numeric outputs under their names: `logits`, `probabilities` (float32), `label_id` (int32); `score`; `embedding` |
| `preprocessor.json`, `tokenizer/` | the `Preprocessor` that packs texts for it (`Preprocessor.load(folder)`) |
| `tfbert_export.json` | task, inputs, label names, sequence length, `quantization` |
| `tfbert.json` | the manifest, kind `tflite-export` |

TF Lite has no TF-Text ops, so the tokenizer stays outside the model: `tfbert.export.tflite_model.TFLiteExport`
(what `tfbert predict`, `SavedModelClient` and `tfbert.artifacts.open` use) packs the texts with that
`Preprocessor`, as a SavedModel's `serving_default` does, cuts the batch to its longest text and runs
`model.tflite`. Classification, regression and embedding models export; the other tasks' outputs are
strings or decoded in the graph (tagging offsets, answer spans, fill-mask tokens) and stay SavedModels.

`quantize="dynamic"` (`--quantize dynamic`) stores the weight matrices as int8 (TF Lite's dynamic-range
quantization: activations stay float32 and are quantized per call for the int8 products). The file is about
4x smaller and the products read a quarter of the bytes, so it is 2-3x faster on a CPU; the outputs move:
all-MiniLM-L6-v2's embeddings keep a cosine of about 0.99 to the float32 ones (benchmarks/serving_ort.py
measures it beside the speed). Measure it on your own task before serving it.

Example:
    >>> path = export_tflite("runs/sst2", "sst2", output_dir="exports")   # a `tfbert finetune` folder
    >>> path
    PosixPath('exports/sst2')
    >>> sorted(entry.name for entry in path.iterdir())
    ['model.tflite', 'preprocessor.json', 'tfbert.json', 'tfbert_export.json', 'tokenizer']
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Sequence

import keras
import tensorflow as tf

from tfbert.artifacts import Artifact
from tfbert.export.module import backend_variables
from tfbert.export.saved_model import export_preprocessor, serving_task, write_export_metadata
from tfbert.export.sources import ExportSource, resolve_source
from tfbert.export.tasks import ServingTask
from tfbert.export.tflite_model import KIND, MODEL_FILE, QUANTIZATIONS, SIGNATURE
from tfbert.outputs import check_free, new_output
from tfbert.text.base import Tokenizer

TFLITE_TASKS = ("classification", "regression", "embedding")
ENCODER_INPUTS = ("token_ids", "segment_ids", "padding_mask")


def export_tflite(
    source: "str | Path | keras.Model | Artifact",
    name: str,
    *,
    tokenizer: Tokenizer | str | Path | None = None,
    output_dir: str | Path = "saved_models",
    sequence_length: int | None = None,
    label_names: Sequence[str] | None = None,
    pair: bool = False,
    pooling: str | None = None,
    quantize: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Writes `output_dir/name/`, a TF Lite export (see the module notes); returns the folder.

    The arguments are `export_saved_model`'s: `source` is a classification, regression or embedding model
    (in memory or `.keras`), a finetune or distill model dir, an encoder folder or a Hugging Face /
    sentence-transformers folder (served as embeddings). `sequence_length` is where texts are truncated;
    the model itself runs at each batch's longest text. `quantize="dynamic"` stores int8 weights (see the
    module notes); None keeps float32. An existing folder is refused unless `overwrite`;
    the folder is written under a temporary name and renamed when complete (`tfbert.outputs`).
    """
    if quantize is not None and quantize not in QUANTIZATIONS:
        raise ValueError(f"quantize {quantize!r}: give one of {', '.join(QUANTIZATIONS)}, or None for float32 weights")
    target = Path(output_dir) / name
    check_free(target, flag="--name", overwrite=overwrite)
    resolved = resolve_source(source, pooling=pooling)
    check_convertible(resolved)
    preprocessor = export_preprocessor(resolved, tokenizer, sequence_length)
    task = serving_task(resolved.task, resolved.model, label_names, pair, {})
    model_bytes = convert(resolved.model, task, quantize)
    with new_output(target, flag="--name", overwrite=overwrite) as staging:
        folder = Path(staging)
        folder.mkdir(parents=True)
        (folder / MODEL_FILE).write_bytes(model_bytes)
        write_export_metadata(folder, KIND, task, preprocessor, pair, resolved, signatures=(SIGNATURE,),
                              extra={"quantization": quantize})
    return target


def check_convertible(resolved: ExportSource) -> None:
    """`ValueError` (one line) for a model a TF Lite export cannot serve, before anything is converted."""
    if resolved.task not in TFLITE_TASKS:
        raise ValueError(f"a {resolved.task} model does not export to TF Lite, which serves "
                         f"{', '.join(TFLITE_TASKS)} models; export it as a SavedModel (--format saved_model)")
    config = resolved.encoder.config
    if config.position_ids_input:
        raise ValueError("encoders with a position_ids input are not exportable yet")
    if config.num_languages:
        raise ValueError("a TF Lite export takes no language input (an encoder with language embeddings); "
                         "export it as a SavedModel (--format saved_model), whose requests name their language")


def convert(model: keras.Model, task: ServingTask, quantize: str | None = None) -> bytes:
    """`model.tflite`'s bytes: `task.from_ids(model, ...)` on int32 ids of open batch and length, builtin ops only;
    int8 weights where `quantize` is `"dynamic"`.

    The converter names a signature's inputs and outputs only when it reads a SavedModel (from concrete
    functions it writes no signature), so the function is saved to a temporary SavedModel first.
    """
    def serving_default(token_ids, segment_ids, padding_mask):
        return task.from_ids(model, {"token_ids": token_ids, "segment_ids": segment_ids,
                                     "padding_mask": padding_mask})

    function = tf.function(serving_default, autograph=False).get_concrete_function(
        *[tf.TensorSpec([None, None], tf.int32, name=name) for name in ENCODER_INPUTS])
    holder = tf.Module()
    holder.model_variables = backend_variables(model.variables)
    with tempfile.TemporaryDirectory(prefix="tfbert-tflite-") as directory:
        tf.saved_model.save(holder, directory, signatures={SIGNATURE: function})
        converter = tf.lite.TFLiteConverter.from_saved_model(directory)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        if quantize == "dynamic":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]   # with no representative data: dynamic range
        try:
            return converter.convert()
        except Exception as error:  # noqa: BLE001  (the converter raises ConverterError and MLIR's own errors)
            raise ValueError(f"this {type(model).__name__} does not convert to TF Lite builtin ops "
                             f"({_first_line(error)}); export it as a SavedModel (--format saved_model)") from None


# The converter's line for each op it cannot express: `loc(...fused["OP:", "LAYER/PATH/op@function"]...): error:
# 'tf.OP' op is neither a custom op nor a flex op`.
UNSUPPORTED_OP = re.compile(r"""fused\["\w+:", "([^"@]+)@[^"]*"\].*'(tf\.\w+)' op is neither a custom op""")


def _first_line(error: Exception) -> str:
    """What the converter could not do, in one line: the TF ops without a TF Lite builtin and the layers
    holding them, else its first line."""
    found = {}
    for path, op in UNSUPPORTED_OP.findall(str(error)):
        found.setdefault(op, set()).add("/".join(path.split("/")[1:-1]) or path)
    if found:
        return "; ".join(f"{op} in {', '.join(sorted(layers)[:3])}" for op, layers in sorted(found.items()))
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return (lines[0] if lines else type(error).__name__)[:300]
