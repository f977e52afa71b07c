"""Runs SavedModel signatures in a process that imports only TensorFlow and TF-Text (as TF Serving has).

    python fresh_process.py REQUESTS_DIR RESULTS_DIR

`REQUESTS_DIR/requests.json` lists `{"key", "directory", "signature"}`; each request's inputs are the
arrays `KEY/INPUT_NAME` saved by `save_arrays` in `REQUESTS_DIR`. The outputs come back the same way
in `RESULTS_DIR` as `KEY/OUTPUT_NAME`. Nothing is pickled: numbers go to an `.npz` read with
`allow_pickle=False`, strings (which NumPy could only pickle) to JSON as hex, NUL bytes kept.
"""

import json
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the TF-Text ops, as TF Serving links them)


def save_arrays(folder: Path, arrays: dict[str, np.ndarray]) -> None:
    """Writes `{name: array}` to `folder`: numbers to `numbers.npz`, byte strings to `strings.json`."""
    numbers, strings = {}, {}
    for name, array in arrays.items():
        array = np.asarray(array)
        if array.dtype.kind in "OSU":
            flat = [value.encode("utf-8") if isinstance(value, str) else bytes(value) for value in array.ravel()]
            strings[name] = {"shape": list(array.shape), "hex": [value.hex() for value in flat]}
        else:
            numbers[name] = array
    np.savez(folder / "numbers.npz", **numbers)
    (folder / "strings.json").write_text(json.dumps(strings), encoding="utf-8")


def load_arrays(folder: Path) -> dict[str, np.ndarray]:
    """The `{name: array}` that `save_arrays` wrote; strings come back as object arrays of bytes."""
    with np.load(folder / "numbers.npz", allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    for name, entry in json.loads((folder / "strings.json").read_text(encoding="utf-8")).items():
        values = np.empty(len(entry["hex"]), dtype=object)
        values[:] = [bytes.fromhex(value) for value in entry["hex"]]
        arrays[name] = values.reshape(entry["shape"])
    return arrays


def main(requests_dir: str, results_dir: str) -> None:
    requests_dir, results_dir = Path(requests_dir), Path(results_dir)
    requests = json.loads((requests_dir / "requests.json").read_text(encoding="utf-8"))
    inputs = load_arrays(requests_dir)
    loaded, results = {}, {}
    for request in requests:
        key, directory = request["key"], request["directory"]
        if directory not in loaded:
            loaded[directory] = tf.saved_model.load(directory)
        prefix = f"{key}/"
        arguments = {name[len(prefix):]: tf.constant(value) for name, value in inputs.items() if name.startswith(prefix)}
        outputs = loaded[directory].signatures[request["signature"]](**arguments)
        results.update({f"{key}/{name}": value.numpy() for name, value in outputs.items()})
    assert not any(name == "tfbert" or name.startswith("tfbert.") for name in sys.modules), \
        "the fresh process imported tfbert"
    save_arrays(results_dir, results)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
