"""The TF Hub BERT tutorials' patterns on a `--hub-pair` export, with `tensorflow_hub` and `tf_keras`.

Run by `test_hub_text_api.py` in a fresh process (TF_USE_LEGACY_KERAS=1 must be set before
TensorFlow is imported): `python hub_tutorial.py PREPROCESS_DIR ENCODER_DIR TEXTS_JSON RESULTS.npz`.
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


def main(preprocess_dir: str, encoder_dir: str, texts_path: str, results_path: str) -> None:
    texts = json.loads(open(texts_path, encoding="utf-8").read())
    first, second = tf.constant(texts["first"]), tf.constant(texts["second"])
    results = {}

    # "Classify text with BERT": strings -> preprocess -> encoder -> classifier, fine-tuned end to end.
    text_input = tf_keras.layers.Input(shape=(), dtype=tf.string)
    preprocess = hub.KerasLayer(preprocess_dir, name="preprocessing")
    encoder = hub.KerasLayer(encoder_dir, trainable=True, name="BERT_encoder")
    outputs = encoder(preprocess(text_input))
    logits = tf_keras.layers.Dense(2)(outputs["pooled_output"])
    classifier = tf_keras.Model(text_input, logits)

    packed = preprocess(first)
    encoded = encoder(packed)
    results.update({f"call/{name}": value.numpy() for name, value in packed.items()})
    results.update({f"encoder/{name}": encoded[name].numpy()
                    for name in ("pooled_output", "sequence_output", "default_output")})
    results["encoder/encoder_outputs"] = np.stack([layer.numpy() for layer in encoded["encoder_outputs"]])

    # "Fine-tune BERT on GLUE": tokenize, then bert_pack_inputs on two segments.
    preprocessor = hub.load(preprocess_dir)
    tokenize = hub.KerasLayer(preprocessor.tokenize)
    bert_pack_inputs = hub.KerasLayer(preprocessor.bert_pack_inputs, arguments={"seq_length": texts["seq_length"]})
    segments = [tokenize(first), tokenize(second)]
    results["tokenize/rank"] = np.array(segments[0].shape.rank)
    results["tokenize/flat"] = segments[0].flat_values.numpy()
    results.update({f"pack/{name}": value.numpy() for name, value in bert_pack_inputs(segments).items()})
    short = preprocessor.bert_pack_inputs(segments, seq_length=texts["short_length"])
    results.update({f"short/{name}": value.numpy() for name, value in short.items()})

    # Bad input (empty, invalid UTF-8, NUL, a 1 MB string) through the same layers, and the pair signature on it.
    bad = tf.constant([bytes.fromhex(text) for text in texts["bad"]])
    results.update({f"bad/{name}": value.numpy() for name, value in preprocess(bad).items()})
    bad_pair = bert_pack_inputs([tokenize(bad), tokenize(bad[::-1])])
    results.update({f"bad_pair/{name}": value.numpy() for name, value in bad_pair.items()})
    signature = preprocessor.signatures["preprocess"](text=bad, text_pair=bad[::-1])
    results.update({f"bad_signature/{name}": value.numpy() for name, value in signature.items()})

    before = [variable.numpy() for variable in encoder.trainable_weights]
    classifier.compile(optimizer=tf_keras.optimizers.Adam(1e-3),
                       loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    classifier.fit(tf.constant(texts["first"]), tf.constant([0, 1] * (len(texts["first"]) // 2)), epochs=1, verbose=0)
    after = [variable.numpy() for variable in encoder.trainable_weights]
    results["finetune/num_trainable"] = np.array(len(before))
    results["finetune/changed"] = np.array(sum(not np.array_equal(a, b) for a, b in zip(before, after)))
    np.savez(results_path, **results)


if __name__ == "__main__":
    main(*sys.argv[1:])
