"""The TF Hub BERT tutorials' patterns on `--hub-pair` exports, with `tensorflow_hub` and `tf_keras`.

Run by `test_hub_text_api.py` in one fresh process for all the pairs it is given (TF_USE_LEGACY_KERAS=1
must be set before TensorFlow is imported): `python hub_tutorial.py REQUEST.json RESULTS.npz`. The
request holds `pairs` (`{kind: [preprocess_dir, encoder_dir]}`) and the texts; the results are
`kind/pattern/output` arrays. Each pair's serving signatures run here on the same text too
(`signature_*` patterns, the encoder's before the fine-tune), so the test compares without loading the
SavedModels again.
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


def _arrays(pattern: str, outputs: dict) -> dict[str, np.ndarray]:
    return {f"{pattern}/{name}": np.asarray(value) for name, value in outputs.items()}


def _error(call) -> str:
    """`Type: message` of the error `call()` raises ("" when it returns)."""
    try:
        call()
    except (TypeError, ValueError, tf.errors.InvalidArgumentError) as error:
        return f"{type(error).__name__}: {error}"
    return ""


def classify_text(preprocess_dir: str, encoder_dir: str, texts: dict) -> dict[str, np.ndarray]:
    """"Classify text with BERT": strings -> preprocess -> encoder -> classifier, fine-tuned end to end."""
    first = tf.constant(texts["first"])
    text_input = tf_keras.layers.Input(shape=(), dtype=tf.string)
    preprocess = hub.KerasLayer(preprocess_dir, name="preprocessing")
    encoder = hub.KerasLayer(encoder_dir, trainable=True, name="BERT_encoder")
    outputs = encoder(preprocess(text_input))
    logits = tf_keras.layers.Dense(2)(outputs["pooled_output"])
    classifier = tf_keras.Model(text_input, logits)

    packed = preprocess(first)
    encoded = encoder(packed)
    results = _arrays("call", packed)
    results.update(_arrays("encoder", {name: encoded[name]
                                       for name in ("pooled_output", "sequence_output", "default_output")}))
    results["encoder/encoder_outputs"] = np.stack([layer.numpy() for layer in encoded["encoder_outputs"]])
    results.update(_arrays("signature_encode", encoder.resolved_object.signatures["encode"](**packed)))
    results.update(_arrays("bad", preprocess(tf.constant([bytes.fromhex(text) for text in texts["bad"]]))))

    before = [variable.numpy() for variable in encoder.trainable_weights]
    classifier.compile(optimizer=tf_keras.optimizers.Adam(1e-3),
                       loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    classifier.fit(first, tf.constant([0, 1] * (len(texts["first"]) // 2)), epochs=1, verbose=0)
    after = [variable.numpy() for variable in encoder.trainable_weights]
    results["finetune/num_trainable"] = np.array(len(before))
    results["finetune/changed"] = np.array(sum(not np.array_equal(a, b) for a, b in zip(before, after)))
    return results


def fine_tune_on_glue(preprocessor, texts: dict) -> dict[str, np.ndarray]:
    """"Fine-tune BERT on GLUE": tokenize, then bert_pack_inputs on two segments; bad input and too many
    segments through the same layers."""
    first, second = tf.constant(texts["first"]), tf.constant(texts["second"])
    tokenize = hub.KerasLayer(preprocessor.tokenize)
    bert_pack_inputs = hub.KerasLayer(preprocessor.bert_pack_inputs, arguments={"seq_length": texts["seq_length"]})
    segments = [tokenize(first), tokenize(second)]
    results = {"tokenize/rank": np.array(segments[0].shape.rank), "tokenize/flat": segments[0].flat_values.numpy()}
    results.update(_arrays("pack", bert_pack_inputs(segments)))
    results.update(_arrays("one_segment", preprocessor.bert_pack_inputs(segments[:1])))
    results.update(_arrays("short", preprocessor.bert_pack_inputs(segments, seq_length=texts["short_length"])))
    bad = tf.constant([bytes.fromhex(text) for text in texts["bad"]])
    results.update(_arrays("bad_pair", bert_pack_inputs([tokenize(bad), tokenize(bad[::-1])])))
    results["errors/no_room"] = np.array(_error(lambda: preprocessor.bert_pack_inputs(segments, seq_length=4)))
    results["errors/too_many_segments"] = np.array(_error(lambda: bert_pack_inputs(segments * 2)))
    results["errors/then_packs"] = np.array(bert_pack_inputs(segments)["input_word_ids"].shape[1])
    return results


def serving_signatures(preprocessor, texts: dict) -> dict[str, np.ndarray]:
    """The preprocessor's own serving signature on the same text (`classify_text` runs the encoder's)."""
    first, second = tf.constant(texts["first"]), tf.constant(texts["second"])
    bad = tf.constant([bytes.fromhex(text) for text in texts["bad"]])
    preprocess = preprocessor.signatures["preprocess"]
    results = _arrays("signature_pair", preprocess(text=first, text_pair=second))
    return {**results, **_arrays("signature_bad_pair", preprocess(text=bad, text_pair=bad[::-1]))}


def main(request_path: str, results_path: str) -> None:
    request = json.loads(open(request_path, encoding="utf-8").read())
    results = {}
    for kind, (preprocess_dir, encoder_dir) in request["pairs"].items():
        preprocessor = hub.load(preprocess_dir)
        pair_results = classify_text(preprocess_dir, encoder_dir, request)
        pair_results.update(fine_tune_on_glue(preprocessor, request))
        pair_results.update(serving_signatures(preprocessor, request))
        results.update({f"{kind}/{name}": value for name, value in pair_results.items()})
    np.savez(results_path, **results)


if __name__ == "__main__":
    main(*sys.argv[1:])
