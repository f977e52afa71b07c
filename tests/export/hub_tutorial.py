"""The TF Hub BERT tutorials' patterns on `--hub-pair` exports, with `tensorflow_hub` and `tf_keras`.

Run by `test_hub_text_api.py` in one fresh process for all the pairs it is given (TF_USE_LEGACY_KERAS=1
must be set before TensorFlow is imported): `python hub_tutorial.py REQUEST.json RESULTS.npz`. The
request holds `pairs` (`{kind: [preprocess_dir, encoder_dir]}`), `mlm_pair` (a pair whose encoder has
the `mlm` sub-object), a scratch `folder` and the texts; the results are `kind/pattern/output` arrays
(`mlm/...` for the mlm pair). Each pair's serving signatures run here on the same text too
(`signature_*` patterns, the encoder's before the fine-tune), so the test compares without loading the
SavedModels again.

"Classify text with BERT" and "Solve GLUE tasks using BERT" are followed as written, with three
changes for a CPU test: tf_keras Adam instead of `official.nlp.optimization`'s AdamW, one epoch
over four examples without the validation pass, and tf.data's default graph rewrites off on the GLUE
input pipeline (`NO_REWRITES`); the GLUE classifier trains under a `OneDeviceStrategy` scope (the
tutorial's strategy on a machine without a TPU or GPU).
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

# tf.data's default rewrites (map fusion and the like) rebuild the functions the map reaches, the
# preprocess SavedModel's among them, each time Model.fit makes an iterator under the strategy: about
# 50 CPU-seconds for the SentencePiece pair (a few for the others), for two batches they cannot speed up.
NO_REWRITES = tf.data.Options()
NO_REWRITES.experimental_optimization.apply_default_optimizations = False

def _arrays(pattern: str, outputs: dict) -> dict[str, np.ndarray]:
    return {f"{pattern}/{name}": np.asarray(value) for name, value in outputs.items()}


def _error(call) -> str:
    """`Type: message` of the error `call()` raises ("" when it returns)."""
    try:
        call()
    except (TypeError, ValueError, tf.errors.InvalidArgumentError) as error:
        return f"{type(error).__name__}: {error}"
    return ""


def _changed(before: list[np.ndarray], variables) -> dict[str, np.ndarray]:
    """How many of `variables` changed since `before`, and the names of those that did not."""
    same = [variable.name for variable, old in zip(variables, before) if np.array_equal(variable.numpy(), old)]
    return {"num_trainable": np.array(len(before)), "changed": np.array(len(before) - len(same)),
            "unchanged": np.array(same, dtype=str)}


def classify_text(preprocess_dir: str, encoder_dir: str, texts: dict, folder: str) -> dict[str, np.ndarray]:
    """"Classify text with BERT": strings -> preprocess -> encoder -> Dropout -> Dense, fine-tuned end to end on
    a tf.data pipeline, saved with `classifier_model.save` and reloaded with `tf.saved_model.load`."""
    first = tf.constant(texts["first"])
    text_input = tf_keras.layers.Input(shape=(), dtype=tf.string, name="text")
    preprocess = hub.KerasLayer(preprocess_dir, name="preprocessing")
    encoder = hub.KerasLayer(encoder_dir, trainable=True, name="BERT_encoder")
    outputs = encoder(preprocess(text_input))
    net = tf_keras.layers.Dropout(0.1)(outputs["pooled_output"])
    net = tf_keras.layers.Dense(1, activation=None, name="classifier")(net)
    classifier = tf_keras.Model(text_input, net)

    packed = preprocess(first)
    encoded = encoder(packed)
    results = _arrays("call", packed)
    results.update(_arrays("call_list", preprocess(list(texts["first"]))))  # the tutorial passes a Python list
    results.update(_arrays("encoder", {name: encoded[name]
                                       for name in ("pooled_output", "sequence_output", "default_output")}))
    results["encoder/encoder_outputs"] = np.stack([layer.numpy() for layer in encoded["encoder_outputs"]])
    results.update(_arrays("signature_encode", encoder.resolved_object.signatures["encode"](**packed)))
    results.update(_arrays("bad", preprocess(tf.constant([bytes.fromhex(text) for text in texts["bad"]]))))
    loaded = encoder.resolved_object
    results.update(_arrays("dropout", {
        "training": [loaded(packed, training=True)["pooled_output"] for _ in range(2)],
        "inference": [encoder(packed)["pooled_output"], loaded(packed, training=False)["pooled_output"]],
    }))

    before = [variable.numpy() for variable in encoder.trainable_weights]
    classifier.compile(optimizer=tf_keras.optimizers.Adam(1e-3),
                       loss=tf_keras.losses.BinaryCrossentropy(from_logits=True),
                       metrics=tf_keras.metrics.BinaryAccuracy())
    labels = [0, 1] * (len(texts["first"]) // 2)
    train_ds = tf.data.Dataset.from_tensor_slices((texts["first"], labels)).batch(2)
    classifier.fit(x=train_ds, epochs=1, verbose=0)
    results.update(_arrays("finetune", _changed(before, encoder.trainable_weights)))

    saved_model_path = os.path.join(folder, "classify_text")
    classifier.save(saved_model_path, include_optimizer=False)
    reloaded_model = tf.saved_model.load(saved_model_path)
    serving = reloaded_model.signatures["serving_default"](first)
    results.update(_arrays("reloaded", {"call": reloaded_model(first), "serving": serving["classifier"],
                                        "expected": classifier(first)}))
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


def _glue_preprocess_model(preprocess_dir: str, sentence_features: list[str], seq_length: int) -> tf_keras.Model:
    """The GLUE tutorial's `make_bert_preprocess_model`."""
    input_segments = [tf_keras.layers.Input(shape=(), dtype=tf.string, name=ft) for ft in sentence_features]
    bert_preprocess = hub.load(preprocess_dir)
    tokenizer = hub.KerasLayer(bert_preprocess.tokenize, name="tokenizer")
    segments = [tokenizer(s) for s in input_segments]
    packer = hub.KerasLayer(bert_preprocess.bert_pack_inputs, arguments=dict(seq_length=seq_length), name="packer")
    return tf_keras.Model(input_segments, packer(segments))


def _glue_classifier(encoder_dir: str, num_classes: int) -> tf_keras.Model:
    """The GLUE tutorial's `build_classifier_model`: a `tf.keras.Model` subclass holding the encoder."""

    class Classifier(tf_keras.Model):
        def __init__(self, num_classes):
            super().__init__(name="prediction")
            self.encoder = hub.KerasLayer(encoder_dir, trainable=True)
            self.dropout = tf_keras.layers.Dropout(0.1)
            self.dense = tf_keras.layers.Dense(num_classes)

        def call(self, preprocessed_text):
            encoder_outputs = self.encoder(preprocessed_text)
            return self.dense(self.dropout(encoder_outputs["pooled_output"]))

    return Classifier(num_classes)


def glue_train_and_export(preprocess_dir: str, encoder_dir: str, texts: dict, folder: str) -> dict[str, np.ndarray]:
    """"Solve GLUE tasks using BERT": the preprocess model in a tf.data map over examples (dicts), the
    classifier trained under a strategy scope, then preprocess + classifier saved as one model and
    reloaded: called on a batch, on one example at a time (`prepare`), and through `serving_default` on
    one example's strings (`prepare_serving`, scalars)."""
    sentence_features = ["sentence1", "sentence2"]
    bert_preprocess_model = _glue_preprocess_model(preprocess_dir, sentence_features, texts["seq_length"])
    test_text = [np.array(texts["first"]), np.array(texts["second"])]
    results = _arrays("glue_preprocess", bert_preprocess_model(test_text))
    count = len(texts["first"])
    examples = {"sentence1": texts["first"], "sentence2": texts["second"], "label": [0, 1] * (count // 2),
                "idx": list(range(count))}

    with tf.distribute.OneDeviceStrategy("/cpu:0").scope():
        dataset = tf.data.Dataset.from_tensor_slices(examples).batch(2)
        dataset = dataset.map(lambda ex: (bert_preprocess_model(ex), ex["label"])).cache().prefetch(tf.data.AUTOTUNE)
        dataset = dataset.with_options(NO_REWRITES)
        classifier_model = _glue_classifier(encoder_dir, 2)
        classifier_model.compile(optimizer=tf_keras.optimizers.Adam(1e-3),
                                 loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                                 metrics=[tf_keras.metrics.SparseCategoricalAccuracy("accuracy", dtype=tf.float32)])
        before = [variable.numpy() for variable in classifier_model.encoder.trainable_weights]
        classifier_model.fit(x=dataset, epochs=1, verbose=0)
    results.update(_arrays("glue_finetune", _changed(before, classifier_model.encoder.trainable_weights)))

    preprocess_inputs = bert_preprocess_model.inputs
    bert_outputs = classifier_model(bert_preprocess_model(preprocess_inputs))
    model_for_export = tf_keras.Model(preprocess_inputs, bert_outputs)
    saved_model_path = os.path.join(folder, "glue")
    save_options = tf.saved_model.SaveOptions(experimental_io_device="/job:localhost")
    model_for_export.save(saved_model_path, include_optimizer=False, options=save_options)
    with tf.device("/job:localhost"):
        reloaded_model = tf.saved_model.load(saved_model_path)
    serving_model = reloaded_model.signatures["serving_default"]
    pairs = list(zip(texts["first"], texts["second"]))
    batch = [tf.constant(texts["first"]), tf.constant(texts["second"])]
    results.update(_arrays("glue_export", {
        "expected": model_for_export(batch),
        "batch": reloaded_model(batch),
        "rows": np.concatenate([reloaded_model([tf.constant([a]), tf.constant([b])]) for a, b in pairs]),
        "serving_rows": np.concatenate([serving_model(sentence1=tf.constant(a), sentence2=tf.constant(b))
                                        ["prediction"] for a, b in pairs]),
        "serving_batch": serving_model(sentence1=batch[0], sentence2=batch[1])["prediction"],
    }))
    matrix = tf.constant([texts["first"][:2]] * 2)
    results["errors/serving_matrix"] = np.array(_error(lambda: serving_model(sentence1=matrix, sentence2=matrix)))
    return results


def masked_lm(preprocess_dir: str, encoder_dir: str, texts: dict) -> dict[str, np.ndarray]:
    """TF Hub's `encoder.mlm`: called on the preprocessed text and masked positions, and fine-tuned as
    `hub.KerasLayer(encoder.mlm, trainable=True)` in a tf_keras model on a masked-LM loss."""
    preprocessor, encoder = hub.load(preprocess_dir), hub.load(encoder_dir)
    packed = preprocessor(tf.constant(texts["masked"]))
    mlm_inputs = dict(packed, masked_lm_positions=tf.constant(texts["positions"], tf.int32))
    mlm_outputs = encoder.mlm(mlm_inputs)
    named = {name: mlm_outputs[name] for name in ("mlm_logits", "sequence_output", "pooled_output")}
    results = _arrays("mlm", {"keys": np.array(sorted(mlm_outputs), dtype=str),
                              "encoder_outputs": len(mlm_outputs["encoder_outputs"]), **named})
    results.update(_arrays("encoder", {name: encoder(packed)[name] for name in ("sequence_output", "pooled_output")}))
    results["training/mlm_logits"] = np.stack([encoder.mlm(mlm_inputs, training=True)["mlm_logits"] for _ in range(2)])

    inputs = {name: tf_keras.layers.Input(shape=(None,), dtype=tf.int32, name=name) for name in mlm_inputs}
    mlm = hub.KerasLayer(encoder.mlm, trainable=True)
    model = tf_keras.Model(inputs, mlm(inputs)["mlm_logits"])
    model.compile(optimizer=tf_keras.optimizers.Adam(1e-3),
                  loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = [variable.numpy() for variable in mlm.trainable_weights]
    model.fit({name: value.numpy() for name, value in mlm_inputs.items()}, np.array(texts["masked_ids"]), epochs=1,
              verbose=0)
    results.update(_arrays("finetune", _changed(before, mlm.trainable_weights)))
    results["finetune/names"] = np.array([variable.name for variable in mlm.trainable_weights], dtype=str)
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
        folder = os.path.join(request["folder"], kind)
        preprocessor = hub.load(preprocess_dir)
        pair_results = classify_text(preprocess_dir, encoder_dir, request, folder)
        pair_results.update(fine_tune_on_glue(preprocessor, request))
        pair_results.update(glue_train_and_export(preprocess_dir, encoder_dir, request, folder))
        pair_results.update(serving_signatures(preprocessor, request))
        results.update({f"{kind}/{name}": value for name, value in pair_results.items()})
    results.update({f"mlm_pair/{name}": value for name, value in masked_lm(*request["mlm_pair"], request).items()})
    np.savez(results_path, **results)


if __name__ == "__main__":
    from tfbert.commands.gc_settings import set_aside_imported_objects

    set_aside_imported_objects()   # TensorFlow's and tf_keras' objects, as the tfbert program does
    main(*sys.argv[1:])
