"""What `serving_default` computes for each kind of model: raw strings in, task outputs out.

| task | inputs | outputs |
|---|---|---|
| `classification` | `text` (+ `text_pair`) | `logits`, `probabilities`, `label_id`, `label` |
| `regression` | `text` (+ `text_pair`) | `score` |
| `tagging` | `text` | per token: `tokens`, `tag_ids`, `tags`, `start`, `end`, `logits` |
| `question_answering` | `question`, `context` (strided windows) | `answer`, `start`, `end`, `score`, `no_answer_score` |
| `multiple_choice` | `context` `[batch]`, `choices` `[batch, choices]` | `logits`, `probabilities`, `choice_id` |
| `embedding` | `text` | `embedding` |
| `fill_mask` | `text` with mask tokens | `tokens`, `token_ids`, `scores`, `mask_positions` |

Example:
    >>> task = Classification(label_names=["negative", "positive"], pair=False)
    >>> task.input_names
    ('text',)
"""

from __future__ import annotations

import abc
from typing import Mapping, Sequence

import keras
import tensorflow as tf

from tfbert.data.preprocessor import Preprocessor
from tfbert.export import fill_mask, question_answering
from tfbert.export.compiled import SmallBatchCompilation
from tfbert.export.offsets import byte_to_char_offsets


def _call(model: keras.Model, inputs: Mapping[str, tf.Tensor], language_id: tf.Tensor | None = None
          ) -> dict[str, tf.Tensor]:
    """The model's outputs on encoder inputs, floats as float32 whatever its dtype policy (the serving
    contract); with `language_id` (one per input row), every token gets that language."""
    outputs = model(_with_language(inputs, language_id), training=False)
    return {name: tf.cast(value, tf.float32) if value.dtype.is_floating else value for name, value in outputs.items()}


def _with_language(inputs: Mapping[str, tf.Tensor], language_id: tf.Tensor | None) -> dict[str, tf.Tensor]:
    """`inputs` with `language_ids` (`language_id` of each row at every token) where given."""
    inputs = dict(inputs)
    if language_id is not None:
        token_ids = inputs["token_ids"]
        rows = tf.reshape(language_id, [-1] + [1] * (token_ids.shape.rank - 1))
        inputs["language_ids"] = tf.broadcast_to(rows, tf.shape(token_ids))
    return inputs


def language_ids(language: tf.Tensor, names: Sequence[str]) -> tf.Tensor:
    """`[batch]` int32 ids of `language` names (`names[i]` is id `i`); an unknown name fails the request."""
    matches = tf.equal(language[:, None], tf.constant(list(names))[None, :])
    known = tf.debugging.Assert(tf.reduce_all(tf.reduce_any(matches, axis=1)),
                                [f"unknown language; expected one of: {', '.join(names)}"])
    with tf.control_dependencies([known]):
        return tf.argmax(tf.cast(matches, tf.int32), axis=1, output_type=tf.int32)


class ServingTask(abc.ABC):
    """Base: `input_names` of the string inputs and `serve(model, preprocessor, inputs)` -> outputs."""

    name = ""
    input_names: tuple[str, ...] = ("text",)
    languages: tuple[str, ...] = ()

    def with_languages(self, names: Sequence[str]) -> "ServingTask":
        """Adds a `language` input (`[batch]` strings, one of `names`) for encoders with language embeddings (XLM)."""
        self.languages = tuple(str(name) for name in names)
        self.input_names = tuple(self.input_names) + ("language",)
        return self

    def language_id(self, inputs: Mapping[str, tf.Tensor]) -> tf.Tensor | None:
        """`[batch]` language ids of the `language` input, or None without languages."""
        return language_ids(inputs["language"], self.languages) if self.languages else None

    @abc.abstractmethod
    def serve(self, model: keras.Model, preprocessor: Preprocessor,
              inputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """The task's outputs for a batch of raw-string inputs."""

    def check(self, preprocessor: Preprocessor) -> None:
        """Raises `ValueError` for options this model and preprocessor cannot serve, before anything is traced."""

    def input_spec(self, name: str) -> tf.TensorSpec:
        """The signature's spec of input `name`: `[batch]` strings unless the task says otherwise."""
        return tf.TensorSpec([None], tf.string, name=name)

    def metadata(self) -> dict:
        languages = {"languages": list(self.languages)} if self.languages else {}
        return {"task": self.name, "inputs": list(self.input_names), **languages}


class _TextTask(ServingTask):
    """A text (or pair) in, per-text outputs out; with `compilation`, small batches run XLA-compiled
    (`tfbert.export.compiled`)."""

    def __init__(self, pair: bool = False, compilation: SmallBatchCompilation | None = None):
        self.pair = pair
        self.compilation = compilation
        self.input_names = ("text", "text_pair") if pair else ("text",)

    def run(self, model: keras.Model, preprocessor: Preprocessor, inputs: Mapping[str, tf.Tensor]) -> dict:
        """The task's numeric outputs (`numbers`) for a batch of raw-string inputs."""
        packed = preprocessor.pack(inputs["text"], inputs["text_pair"] if self.pair else None)
        encoder_inputs = _with_language(packed, self.language_id(inputs))
        if self.compilation is None:
            return self.from_ids(model, preprocessor.trim_padding(encoder_inputs))
        return self.numbers(self.compilation.call(lambda rows: _call(model, rows), encoder_inputs,
                                                  preprocessor.trim_padding))

    def from_ids(self, model: keras.Model, encoder_inputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """The task's numeric outputs on packed encoder inputs: what `serving_default` computes after packing,
        and all a TF Lite export holds (`tfbert.export.tflite`); `serve` adds the string outputs."""
        return self.numbers(_call(model, encoder_inputs))

    @abc.abstractmethod
    def numbers(self, outputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """The task's numeric outputs from the model's outputs."""

    def metadata(self):
        compiled = {"xla_max_batch": self.compilation.max_batch} if self.compilation else {}
        return {**super().metadata(), **compiled}


class Classification(_TextTask):
    """`logits`, softmax `probabilities`, the arg-max `label_id` and its `label` name."""

    name = "classification"

    def __init__(self, label_names: Sequence[str], pair: bool = False,
                 compilation: SmallBatchCompilation | None = None):
        super().__init__(pair, compilation)
        self.label_names = [str(label) for label in label_names]

    def serve(self, model, preprocessor, inputs):
        outputs = self.run(model, preprocessor, inputs)
        return {**outputs, "label": tf.gather(tf.constant(self.label_names), outputs["label_id"])}

    def numbers(self, outputs):
        logits = outputs["logits"]
        return {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1),
                "label_id": tf.argmax(logits, axis=-1, output_type=tf.int32)}

    def metadata(self):
        return {**super().metadata(), "label_names": self.label_names}


class Regression(_TextTask):
    """One float `score` per text or pair."""

    name = "regression"

    def serve(self, model, preprocessor, inputs):
        return self.run(model, preprocessor, inputs)

    def numbers(self, outputs):
        return {"score": outputs["score"]}


class Embedding(_TextTask):
    """One float `embedding` vector per text (the model's pooling)."""

    name = "embedding"

    def serve(self, model, preprocessor, inputs):
        return self.run(model, preprocessor, inputs)

    def numbers(self, outputs):
        return {"embedding": outputs["embedding"]}


class MultipleChoice(ServingTask):
    """A score per choice: each `(context, choice)` pair packed as fine-tuning packs it (`encode_choices`).

    `choices` is `[batch, choices]` strings (the same number for every context); `logits` and
    softmax `probabilities` are `[batch, choices]`, `choice_id` the best choice's index.
    """

    name = "multiple_choice"
    input_names = ("context", "choices")

    def input_spec(self, name):
        if name == "choices":
            return tf.TensorSpec([None, None], tf.string, name=name)
        return super().input_spec(name)

    def serve(self, model, preprocessor, inputs):
        choices = inputs["choices"]
        shape = tf.shape(choices)
        contexts = tf.repeat(inputs["context"], shape[1])
        packed = preprocessor.pack(contexts, tf.reshape(choices, [-1]))
        logits = _call(model, {name: tf.reshape(value, [shape[0], shape[1], preprocessor.sequence_length])
                               for name, value in packed.items()}, self.language_id(inputs))["logits"]
        return {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1),
                "choice_id": tf.argmax(logits, axis=-1, output_type=tf.int32)}


class Tagging(ServingTask):
    """A tag per piece of the text, at the piece's position `1 .. pieces` after `[CLS]`.

    `tokens` `[batch, sequence_length]` holds every position's token (`[CLS]`, pieces, `[SEP]`,
    padding); `tag_ids`/`tags` are -1/`""` and `start`/`end` -1 at positions that are not text.
    `start`/`end` are character offsets of each piece in the text (invalid UTF-8 replaced).
    """

    name = "tagging"

    def __init__(self, tag_names: Sequence[str]):
        self.tag_names = [str(tag) for tag in tag_names]

    def serve(self, model, preprocessor, inputs):
        text = preprocessor.clean(inputs["text"])
        ids, starts, ends = preprocessor.tokenizer.tokenize_with_offsets(text)
        room = preprocessor.sequence_length - 2
        ids, starts, ends = ids[:, :room], starts[:, :room], ends[:, :room]
        encoder_inputs = preprocessor.pack_ids(ids)
        logits = _call(model, encoder_inputs, self.language_id(inputs))["logits"]
        length = preprocessor.sequence_length
        is_text = tf.sequence_mask(ids.row_lengths() + 1, length) & ~tf.sequence_mask(tf.ones_like(ids.row_lengths()), length)
        # Offsets of the pieces, shifted one position right for [CLS] (or <s>).
        char_starts = byte_to_char_offsets(text, starts.to_tensor(0, shape=[None, length - 1]))
        char_ends = byte_to_char_offsets(text, ends.to_tensor(0, shape=[None, length - 1]))
        shift = [[0, 0], [1, 0]]
        tag_ids = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {
            "logits": logits,
            "tokens": preprocessor.tokenizer.id_to_token(encoder_inputs["token_ids"]),
            "tag_ids": tf.where(is_text, tag_ids, -1),
            "tags": tf.where(is_text, tf.gather(tf.constant(self.tag_names), tag_ids), ""),
            "start": tf.where(is_text, tf.pad(char_starts, shift), -1),
            "end": tf.where(is_text, tf.pad(char_ends, shift), -1),
        }

    def metadata(self):
        return {**super().metadata(), "tag_names": self.tag_names}


class QuestionAnswering(ServingTask):
    """The best answer span of `context` for `question` over strided windows of the context.

    `doc_stride` pieces between window starts (by default a third of the sequence, 128 for 384 as
    in SQuAD's reference scripts; at most one window); at most `max_windows` windows per question.
    """

    name = "question_answering"
    input_names = ("question", "context")

    def __init__(self, max_answer_length: int = 30, max_question_length: int | None = None,
                 allow_no_answer: bool = False, no_answer_threshold: float = 0.0, doc_stride: int | None = None,
                 max_windows: int = 16):
        if doc_stride is not None and doc_stride < 1:
            raise ValueError(f"doc_stride must be positive, got {doc_stride}")
        if max_windows < 1:
            raise ValueError(f"max_windows must be positive, got {max_windows}")
        self.max_answer_length = max_answer_length
        self.max_question_length = max_question_length
        self.allow_no_answer = allow_no_answer
        self.no_answer_threshold = no_answer_threshold
        self.doc_stride = doc_stride
        self.max_windows = max_windows

    def serve(self, model, preprocessor, inputs):
        length = preprocessor.sequence_length
        packed = question_answering.pack_question_windows(
            preprocessor, inputs["question"], inputs["context"], self.question_length(length),
            self.doc_stride or max(1, length // 3), self.max_windows)
        language_id = self.language_id(inputs)
        logits = _call(model, packed.inputs, None if language_id is None else tf.gather(language_id, packed.example))
        return question_answering.answers(packed, logits["start_logits"], logits["end_logits"],
                                          self.max_answer_length, self.allow_no_answer, self.no_answer_threshold)

    def question_length(self, sequence_length: int) -> int:
        """`max_question_length`, by default 64 pieces or half the sequence, whichever is less."""
        if self.max_question_length is None:
            return min(64, sequence_length // 2)
        if self.max_question_length > sequence_length - 5:
            raise ValueError(f"max_question_length {self.max_question_length} leaves no room for the context in "
                             f"sequence_length {sequence_length}")
        return self.max_question_length

    def metadata(self):
        return {**super().metadata(), "max_answer_length": self.max_answer_length,
                "max_question_length": self.max_question_length, "allow_no_answer": self.allow_no_answer,
                "no_answer_threshold": self.no_answer_threshold, "doc_stride": self.doc_stride,
                "max_windows": self.max_windows}


class FillMask(ServingTask):
    """Top-k tokens at each of the first `max_masks` mask tokens of the text (a `PretrainingModel`)."""

    name = "fill_mask"

    def __init__(self, top_k: int = 5, max_masks: int = 4):
        self.top_k = top_k
        self.max_masks = max_masks

    def check(self, preprocessor):
        vocabulary = preprocessor.tokenizer.vocabulary_size()
        if self.top_k > vocabulary:
            raise ValueError(f"top_k (--top-k) {self.top_k} is more than the {vocabulary:,} tokens of the vocabulary; "
                             f"give at most {vocabulary:,}")
        if self.max_masks > preprocessor.sequence_length:
            raise ValueError(f"max_masks (--max-masks) {self.max_masks} is more than the sequence length "
                             f"{preprocessor.sequence_length}; give at most {preprocessor.sequence_length}")

    def serve(self, model, preprocessor, inputs):
        tokenizer = preprocessor.tokenizer
        ids = fill_mask.tokenize_with_masks(tokenizer, preprocessor.clean(inputs["text"]))
        encoder_inputs = preprocessor.pack_ids(ids)
        positions, used = fill_mask.mask_positions(encoder_inputs["token_ids"], tokenizer.mask_id, self.max_masks)
        mlm_logits = _call(model, {**encoder_inputs, "masked_positions": positions},
                           self.language_id(inputs))["mlm_logits"]
        return fill_mask.top_tokens(tokenizer, mlm_logits, used, positions, self.top_k)

    def metadata(self):
        return {**super().metadata(), "top_k": self.top_k, "max_masks": self.max_masks}
