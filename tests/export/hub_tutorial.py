"""The TF Hub BERT tutorials' patterns on `--hub-pair` exports, with `tensorflow_hub` and `tf_keras`.

Run by `test_hub_text_api.py` in one fresh process for every export (TF_USE_LEGACY_KERAS=1 must be
set before TensorFlow is imported): `python hub_tutorial.py REQUEST_JSON RESULTS.npz`, where the
request holds `pairs` (`{kind: [preprocess_dir, encoder_dir]}`), the texts and lengths. Results are
`KIND.PATTERN/OUTPUT` arrays; the `signature.*` patterns are the SavedModels' serving signatures on
the same text, run in the same process, for the test to compare with.
"""

import json
import os
import sys

os.environ["TF_USE_LEGACY_KERAS"] = "1"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_hub as hub  # noqa: E402
import tensorflow_text  # noqa: E402,F401  (registers the tokenizer ops)
import tf_keras  # noqa: E402


def _numpy(outputs, prefix):
    return {f"{prefix}/{name}": value.numpy() for name, value in outputs.items()}


def tutorial(preprocess_dir, encoder_dir, request):
    """"Classify text with BERT" and "Fine-tune BERT on GLUE" on one pair; `{pattern/output: array}`."""
    first, second = tf.constant(request["first"]), tf.constant(request["second"])
    results = {}
    text_input = tf_keras.layers.Input(shape=(), dtype=tf.string)
    preprocess = hub.KerasLayer(preprocess_dir, name="preprocessing")
    encoder = hub.KerasLayer(encoder_dir, trainable=True, name="BERT_encoder")
    logits = tf_keras.layers.Dense(2)(encoder(preprocess(text_input))["pooled_output"])
    classifier = tf_keras.Model(text_input, logits)

    packed = preprocess(first)
    encoded = encoder(packed)
    results.update(_numpy(packed, "call"))
    results.update({f"encoder/{name}": encoded[name].numpy()
                    for name in ("pooled_output", "sequence_output", "default_output")})
    results["encoder/encoder_outputs"] = np.stack([layer.numpy() for layer in encoded["encoder_outputs"]])

    preprocessor = hub.load(preprocess_dir)
    tokenize = hub.KerasLayer(preprocessor.tokenize)
    bert_pack_inputs = hub.KerasLayer(preprocessor.bert_pack_inputs, arguments={"seq_length": request["seq_length"]})
    segments = [tokenize(first), tokenize(second)]
    results["tokenize/rank"] = np.array(segments[0].shape.rank)
    results.update(_numpy(bert_pack_inputs(segments), "pack"))
    results.update(_numpy(preprocessor.bert_pack_inputs(segments, seq_length=request["short_length"]), "short"))
    try:
        hub.KerasLayer(preprocessor.bert_pack_inputs, arguments={"seq_length": 4})(segments)
        results["too_short/error"] = np.array("")
    except tf.errors.InvalidArgumentError as error:
        results["too_short/error"] = np.array(error.message)
    bad = tf.constant([bytes.fromhex(text) for text in request["bad"]])
    results.update(_numpy(preprocess(bad), "bad"))

    signatures = preprocessor.signatures
    results.update(_numpy(signatures["preprocess"](text=first), "signature.call"))
    results.update(_numpy(signatures["preprocess"](text=first, text_pair=second), "signature.pack"))
    results.update(_numpy(signatures["preprocess"](text=bad), "signature.bad"))
    results.update(_numpy(hub.load(encoder_dir).signatures["encode"](**packed), "signature.encoder"))

    before = [variable.numpy() for variable in encoder.trainable_weights]
    classifier.compile(optimizer=tf_keras.optimizers.Adam(1e-3),
                       loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    classifier.fit(first, tf.constant([0, 1] * (len(request["first"]) // 2)), epochs=1, verbose=0)
    after = [variable.numpy() for variable in encoder.trainable_weights]
    results["finetune/num_trainable"] = np.array(len(before))
    results["finetune/changed"] = np.array(sum(not np.array_equal(a, b) for a, b in zip(before, after)))
    return results


def main(request_path: str, results_path: str) -> None:
    request = json.loads(open(request_path, encoding="utf-8").read())
    results = {}
    for kind, (preprocess_dir, encoder_dir) in request["pairs"].items():
        results.update({f"{kind}.{name}": value for name, value in tutorial(preprocess_dir, encoder_dir, request).items()})
    np.savez(results_path, **results)


if __name__ == "__main__":
    main(*sys.argv[1:])
