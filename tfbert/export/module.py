"""The `tf.Module` that a tfbert SavedModel holds: tokenizer, packer, model and the signature functions.

Signatures (all batched, `[batch]` strings or `[batch, sequence_length]` int32):

- `serving_default`: the task's raw-string inputs to its outputs (`tfbert.export.tasks`).
- `tokenize`: `text` to `token_ids` `[batch, longest]` (pad id after the end) and `lengths`.
- `preprocess`: `text` (+ `text_pair`) to `input_word_ids`, `input_mask`, `input_type_ids`.
- `encode`: those three to `sequence_output` and `pooled_output` (float32).

Example:
    >>> module = ServingModule(task, model, encoder, Preprocessor(tokenizer, 128))   # what export_saved_model does  # doctest: +SKIP
    >>> tf.saved_model.save(module, "saved_models/sst2/1", signatures=module.signatures())  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Iterable

import keras
import tensorflow as tf

from tfbert.data.preprocessor import Preprocessor
from tfbert.export.hub_text import HubText
from tfbert.export.preprocessing import LANGUAGE_IDS, from_hub_names, to_hub_names
from tfbert.export.tasks import ServingTask
from tfbert.models.encoder import Encoder
from tfbert.models.pretraining import PretrainingModel


def backend_variables(variables: Iterable[keras.Variable]) -> list[tf.Variable]:
    """The `tf.Variable`s behind Keras variables, each once (a tied decoder holds the token embedding
    too), to list on the exported module.

    The modules list these instead of holding the Keras models themselves: `tf.saved_model.save`
    would walk a Keras model's whole object graph (its layers' properties and functions), more than
    half of an export's time, for nothing the signatures need; they capture only the variables.

    TF Serving loads SavedModels the TF1 way (a session restores variables through the
    MetaGraph's saver). Keras 3 variables are not `tf.Variable`s; tracked only through
    them, the variables the serving functions read are never restored there ("Could not
    find variable layer0_attention/output/kernel"). Listing the underlying `tf.Variable`s
    makes them plain checkpointed variables, which both loaders restore.
    """
    distinct = {}
    for variable in variables:
        distinct.setdefault(id(variable), variable.value)
    return list(distinct.values())


def _strings(name: str) -> tf.TensorSpec:
    return tf.TensorSpec([None], tf.string, name=name)


def _shape_checked(function):
    """`function` with each input checked, when it runs, to have the shape of its signature (`[batch]`
    strings, `[batch, choices]` ...).

    A loaded signature does not check shapes (TF Serving feeds what the request holds), so a scalar
    string would fail deep in the graph; `tf.ensure_shape` fails first, naming the expected shape.
    """
    def checked(*inputs, **named):
        inputs = [tf.ensure_shape(value, value.shape) for value in inputs]
        named = {name: tf.ensure_shape(value, value.shape) for name, value in named.items()}
        return function(*inputs, **named)
    return checked


def _ids(name: str, length: int | None) -> tf.TensorSpec:
    return tf.TensorSpec([None, length], tf.int32, name=name)


def _encoder_input_names(encoder: Encoder) -> tuple[str, ...]:
    """TF Hub's three input names, plus `input_language_ids` for an encoder with language embeddings (XLM)."""
    return ("input_word_ids", "input_mask", "input_type_ids") + ((LANGUAGE_IDS,) if encoder.config.num_languages else ())


class ServingModule(tf.Module):
    """Holds everything a served request needs; `signatures()` gives the functions to save.

    `pair_preprocess` makes `preprocess` take `text_pair` too (on by default when the task does).
    """

    def __init__(self, task: ServingTask, model: keras.Model, encoder: Encoder, preprocessor: Preprocessor,
                 pair_preprocess: bool | None = None):
        super().__init__(name="tfbert_serving")
        self.task = task
        self.preprocessor = preprocessor
        self.model_variables = backend_variables(model.variables)
        length = preprocessor.sequence_length
        pair = "text_pair" in task.input_names if pair_preprocess is None else pair_preprocess

        def serve(**inputs):
            return task.serve(model, preprocessor, inputs)

        def tokenize(text):
            return preprocessor.tokenize(text)

        def preprocess(text, text_pair=None):
            return to_hub_names(preprocessor.pack(text, text_pair))

        def encode(**inputs):
            outputs = encoder(from_hub_names(inputs), training=False)
            return {name: tf.cast(outputs[name], tf.float32) for name in ("sequence_output", "pooled_output")}

        self.serve = tf.function(_shape_checked(serve), autograph=False).get_concrete_function(
            **{name: task.input_spec(name) for name in task.input_names})
        self.tokenize = tf.function(_shape_checked(tokenize), input_signature=[_strings("text")],
                                    autograph=False)
        preprocess_inputs = [_strings("text")] + ([_strings("text_pair")] if pair else [])
        self.preprocess = tf.function(_shape_checked(preprocess), input_signature=preprocess_inputs,
                                      autograph=False)
        self.encode = tf.function(_shape_checked(encode), autograph=False).get_concrete_function(
            **{name: _ids(name, length) for name in _encoder_input_names(encoder)})

    def signatures(self) -> dict[str, tf.types.experimental.ConcreteFunction]:
        """`serving_default`, `tokenize`, `preprocess`, `encode`, ready for `tf.saved_model.save`."""
        return {
            "serving_default": self.serve,
            "tokenize": self.tokenize.get_concrete_function(),
            "preprocess": self.preprocess.get_concrete_function(),
            "encode": self.encode,
        }


class HubEntryPoint(tf.__internal__.tracking.AutoTrackable):
    """A TF Hub preprocessor entry point (`tokenize`, `bert_pack_inputs`) saved as a callable object that
    holds the `Preprocessor` its function reads, not as a bare function.

    The GLUE tutorial keeps only the entry points (`hub.KerasLayer(preprocessor.tokenize)`) in the model it
    saves. A restored bare function lists none of the resources it captures, so that save fails for a
    tokenizer with lookup tables or a SentencePiece model ("Tried to export a function which references an
    'untracked' resource"); through this object the saved model reaches them and carries them along.
    """

    def __init__(self, function, preprocessor: Preprocessor):
        self.preprocessor = preprocessor
        self.__call__ = function


class PreprocessingModule(tf.Module):
    """TF Hub's preprocessing model: `serving_default` = `preprocess`, plus `tokenize`.

    Also TF Hub's text API (`tfbert.export.hub_text`): the module is callable on strings and has
    `tokenize` (a RaggedTensor) and `bert_pack_inputs`, so `hub.KerasLayer` and `tf.data` maps use it
    as they use TF Hub's BERT preprocessors. Run it in `tf.data` (CPU) and feed the encoder on the accelerator.
    """

    def __init__(self, preprocessor: Preprocessor, pair: bool = False):
        super().__init__(name="tfbert_preprocessing")
        self.preprocessor = preprocessor
        hub_text = HubText(preprocessor)
        self.preprocess = tf.function(
            _shape_checked(lambda text, text_pair=None: to_hub_names(preprocessor.pack(text, text_pair))),
            input_signature=[_strings("text")] + ([_strings("text_pair")] if pair else []), autograph=False)
        self.padded_tokenize = tf.function(_shape_checked(preprocessor.tokenize),
                                           input_signature=[_strings("text")], autograph=False)
        # TF Hub's entry points take one string as a batch of one (`hub_text.string_batch`), not `_shape_checked`
        self.__call__ = tf.function(hub_text.call, input_signature=[_strings("text")], autograph=False)
        tokenize = tf.function(hub_text.tokenize, input_signature=[_strings("text")], autograph=False)
        bert_pack_inputs = tf.function(hub_text.bert_pack_inputs, autograph=False)
        for segments in hub_text.segment_specs():
            bert_pack_inputs.get_concrete_function(segments)
            bert_pack_inputs.get_concrete_function(segments, seq_length=tf.TensorSpec([], tf.int32))
        self.tokenize = HubEntryPoint(tokenize, preprocessor)
        self.bert_pack_inputs = HubEntryPoint(bert_pack_inputs, preprocessor)

    def signatures(self) -> dict[str, tf.types.experimental.ConcreteFunction]:
        preprocess = self.preprocess.get_concrete_function()
        return {"serving_default": preprocess, "preprocess": preprocess,
                "tokenize": self.padded_tokenize.get_concrete_function()}


def _hub_outputs(outputs: dict) -> dict:
    """An `Encoder`'s outputs as TF Hub's (float32): `pooled_output`, `sequence_output`, `encoder_outputs`."""
    return {"pooled_output": tf.cast(outputs["pooled_output"], tf.float32),
            "sequence_output": tf.cast(outputs["sequence_output"], tf.float32),
            "encoder_outputs": [tf.cast(layer, tf.float32) for layer in outputs["encoder_outputs"]]}


class MaskedLMModule(tf.__internal__.tracking.AutoTrackable):
    """TF Hub's `encoder.mlm`: `mlm(inputs, training=False)` with the three ids and `masked_lm_positions`
    `[batch, predictions]` returns the encoder's outputs (`pooled_output`, `sequence_output`,
    `encoder_outputs`) and `mlm_logits` `[batch, predictions, vocabulary]` (float32) from the source's
    masked-LM head. Its `variables`, `trainable_variables` and `regularization_losses` (the encoder's and
    the head's) let `hub.KerasLayer(encoder.mlm, trainable=True)` train it, as with TF Hub's BERT encoders.

    A `PretrainingModel`'s head reads the exported encoder's `sequence_output`, so one encoder pass gives
    every output (the same dropout with `training=True`); a model whose masked LM is another encoder's
    (DeBERTa RTD's generator) is called whole for `mlm_logits`.

    Example:
        >>> encoder = tf.saved_model.load("saved_models/bert_encoder/1")   # from export_hub_pair (tfbert export --hub-pair)  # doctest: +SKIP
        >>> encoder.mlm({**packed, "masked_lm_positions": tf.constant([[3]])})["mlm_logits"].shape  # doctest: +SKIP
        TensorShape([1, 1, 30522])
    """

    def __init__(self, model: keras.Model, encoder: Encoder, input_names: tuple[str, ...]):
        head = model.get_layer("mlm_head") if isinstance(model, PretrainingModel) else None
        parts = (encoder, head) if head is not None else (model,)
        self.variables = backend_variables(variable for part in parts for variable in part.variables)
        self.trainable_variables = backend_variables(
            variable for part in parts for variable in part.trainable_variables)
        self.regularization_losses = []

        def call(inputs, training=False):
            encoder_inputs = from_hub_names(inputs)
            encoded = encoder(encoder_inputs, training=training)
            positions = tf.cast(inputs["masked_lm_positions"], tf.int32)
            if head is not None:
                logits = head(encoded["sequence_output"], positions)
            else:
                logits = model({**encoder_inputs, "masked_positions": positions}, training=training)["mlm_logits"]
            return {**_hub_outputs(encoded), "mlm_logits": tf.cast(logits, tf.float32)}

        specs = {name: _ids(name, None) for name in input_names + ("masked_lm_positions",)}
        self.__call__ = tf.function(call, autograph=False)
        for training in (False, True):
            self.__call__.get_concrete_function(specs, training=training)


class EncoderModule(tf.__internal__.tracking.AutoTrackable):
    """TF Hub's encoder model: `serving_default` = `encode` on `input_word_ids`, `input_mask`, `input_type_ids`.

    The sequence length is left open (`[batch, None]`), so TPU input pipelines choose it. The
    SavedModel is also TF Hub's reusable encoder: `encoder(inputs, training=False)` returns
    `pooled_output`, `sequence_output`, `encoder_outputs` (one per layer) and `default_output`, and
    `variables`, `trainable_variables` and `regularization_losses` let `hub.KerasLayer(...,
    trainable=True)` fine-tune it (dropout only with `training=True`). With `mlm_model` (a pretraining
    model whose masked-LM head shares the encoder), the `mlm` sub-object too (`MaskedLMModule`). A plain
    `AutoTrackable`, because `tf.Module` reserves those three names for properties that are not saved.
    """

    def __init__(self, encoder: Encoder, mlm_model: keras.Model | None = None):
        self.variables = backend_variables(encoder.variables)
        self.trainable_variables = [variable.value for variable in encoder.trainable_variables]
        self.regularization_losses = []

        def encode(**inputs):
            outputs = encoder(from_hub_names(inputs), training=False)
            return {name: tf.cast(outputs[name], tf.float32) for name in ("sequence_output", "pooled_output")}

        def call(inputs, training=False):
            outputs = _hub_outputs(encoder(from_hub_names(inputs), training=training))
            return {**outputs, "default_output": outputs["pooled_output"]}

        ids = {name: _ids(name, None) for name in _encoder_input_names(encoder)}
        self.encode = tf.function(encode, autograph=False).get_concrete_function(**ids)
        if mlm_model is not None:
            self.mlm = MaskedLMModule(mlm_model, encoder, _encoder_input_names(encoder))
        self.__call__ = tf.function(call, autograph=False)
        for training in (False, True):
            self.__call__.get_concrete_function(ids, training=training)

    def signatures(self) -> dict[str, tf.types.experimental.ConcreteFunction]:
        return {"serving_default": self.encode, "encode": self.encode}
