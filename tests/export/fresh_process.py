"""Runs SavedModel signatures in a process that imports only TensorFlow and TF-Text (as TF Serving has).

    python fresh_process.py requests.pkl results.npz

`requests.pkl` is a list of `(key, saved_model_dir, signature, {input name: numpy array})`;
`results.npz` holds `key/output name` arrays.
"""

import pickle
import sys

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the TF-Text ops, as TF Serving links them)


def main(requests_path: str, results_path: str) -> None:
    with open(requests_path, "rb") as handle:
        requests = pickle.load(handle)
    loaded, results = {}, {}
    for key, directory, signature, inputs in requests:
        if directory not in loaded:
            loaded[directory] = tf.saved_model.load(directory)
        outputs = loaded[directory].signatures[signature](**{name: tf.constant(value) for name, value in inputs.items()})
        results.update({f"{key}/{name}": value.numpy() for name, value in outputs.items()})
    assert not any(name == "tfbert" or name.startswith("tfbert.") for name in sys.modules), \
        "the fresh process imported tfbert"
    np.savez(results_path, **results)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
