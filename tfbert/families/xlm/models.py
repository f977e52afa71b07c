"""XLM: cross-lingual language models with per-token language embeddings (CLM, MLM and TLM).

The encoder is tfbert's post-LayerNorm transformer with `num_languages`
language embeddings and no segment embeddings (`type_vocab_size: 0`). Its
language-model head is a plain tied projection plus a bias, with no dense
transform or LayerNorm (unlike BERT's).

- CLM (`objective="clm"`): a causal encoder predicts every next token.
- MLM (`objective="mlm"`): masked tokens of streams of text in one language.
- TLM: the same model and loss as MLM, on a parallel pair concatenated; the
  pair's `language_ids` differ per sentence and its positions restart at the
  second sentence (`tlm_position_ids`), so the config has `position_ids_input: true`.
"""

from __future__ import annotations

from typing import Any, Mapping

import keras
from keras import ops

from tfbert.config import ModelConfig, as_model_config
from tfbert.models.heads import TiedDecoder
from tfbert.models.encoder import Encoder
from tfbert.models.family import FamilyPretrainingModel
from tfbert.models.objectives import Terms, WeightedObjectives, sparse_cross_entropy
from tfbert.models.positions import gather_positions

OBJECTIVES = ("mlm", "clm")


def tlm_position_ids(segment_ids, padding_mask):
    """Positions that restart at the second sentence of a TLM pair.

    `segment_ids` is 0 on the first sentence and 1 on the second; the second
    sentence's positions count from 0 again. Padding keeps its plain index.

    Example:
        >>> ops.convert_to_numpy(tlm_position_ids([[0, 0, 0, 1, 1, 0]], [[1, 1, 1, 1, 1, 0]])).tolist()
        [[0, 1, 2, 0, 1, 5]]
    """
    segment_ids = ops.cast(segment_ids, "int32")
    mask = ops.cast(padding_mask, "int32")
    first_length = ops.sum((1 - segment_ids) * mask, axis=1, keepdims=True)
    plain = ops.expand_dims(ops.arange(ops.shape(segment_ids)[1], dtype="int32"), 0)
    return plain - segment_ids * mask * first_length


class TiedLanguageModelHead(TiedDecoder):
    """XLM's prediction layer: the transposed token embedding table plus a bias; float32 logits.

    With `positions` it predicts only those slots (`[batch, predictions, vocab]`);
    without, every position (`[batch, length, vocab]`).

    Example:
        >>> import numpy as np
        >>> from tfbert.models.embeddings import TokenEmbedding
        >>> head = TiedLanguageModelHead(TokenEmbedding(30522, 128))   # the encoder's token table
        >>> logits = head(np.zeros((1, 6, 128), "float32"), np.array([[1, 4]]))
        >>> tuple(logits.shape), str(keras.backend.standardize_dtype(logits.dtype))
        ((1, 2, 30522), 'float32')
    """

    def build(self, sequence_shape, positions_shape=None):
        self.build_output_bias()

    def call(self, sequence, positions=None):
        return self.decode(sequence if positions is None else gather_positions(sequence, positions))

    def compute_output_shape(self, sequence_shape, positions_shape=None):
        leading = sequence_shape[:-1] if positions_shape is None else positions_shape
        return (*leading, self.token_embedding.input_dim)


@keras.saving.register_keras_serializable(package="tfbert")
class XLMPretrainingModel(FamilyPretrainingModel, WeightedObjectives, keras.Model):
    """XLM pretraining with the CLM objective or the MLM/TLM objective, trained by `model.fit`.

    `objective="mlm"` (MLM and TLM batches alike): inputs are the encoder's
    (`token_ids` masked, `segment_ids`, `padding_mask`, `language_ids`, and
    `position_ids` when the config asks for them) plus `masked_positions`;
    labels `masked_ids` and `masked_weights`; output `mlm_logits`
    `[batch, predictions, vocab]`; metrics `mlm_loss`, `mlm_accuracy`.

    `objective="clm"`: the encoder is causal; inputs are the encoder's; the
    targets are the inputs shifted by one, so labels may be omitted; output
    `lm_logits` `[batch, length, vocab]`; metrics `clm_loss`, `clm_accuracy`.

    Example:
        >>> from tfbert.config import load_config
        >>> model = XLMPretrainingModel(load_config("xlm_tiny"), objective="mlm")     # or xlm_mlm_enfr_1024
        >>> model.compile(optimizer="adam")
        >>> model.fit(dataset)   # (inputs, labels) dicts; traces a train step: ~10 s of CPU, tests/conformance trains each family  # doctest: +SKIP
    """

    config_arguments = ("objective",)
    objective_sets = (("mlm",), ("clm",))
    lm_head = "tied"

    def __init__(self, config: ModelConfig | Mapping[str, Any], objective: str = "mlm", **kwargs):
        config = as_model_config(config)
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown XLM objective {objective!r}; allowed: {', '.join(OBJECTIVES)} (TLM batches use 'mlm')")
        self.check_family(config.spec, (objective,))
        if config.encoder.embedding_size != config.encoder.hidden_size:
            raise ValueError(
                f"XLM's tied head needs embedding_size == hidden_size; got {config.encoder.embedding_size} "
                f"and {config.encoder.hidden_size}"
            )
        policy = kwargs.pop("dtype", None)
        encoder = Encoder(config.encoder, causal=objective == "clm", dtype=policy, name="encoder",
                          architecture=config.architecture)
        inputs = dict(encoder.input)
        if objective == "mlm":
            inputs["masked_positions"] = keras.Input(shape=(None,), dtype="int32", name="masked_positions")
        sequence = encoder({name: inputs[name] for name in encoder.input})["sequence_output"]
        head = TiedLanguageModelHead(encoder.token_embedding, dtype=policy, name="lm_head")
        if objective == "mlm":
            outputs = {"mlm_logits": head(sequence, inputs["masked_positions"])}
        else:
            outputs = {"lm_logits": head(sequence)}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.config = config
        self.objective = objective
        self.encoder = encoder
        self.record_dtype_policy(policy)
        self.track_objectives((objective,))

    def objective_terms(self, x, y, y_pred) -> dict[str, Terms]:
        """Float32 `(loss, hit, weight)` of the model's objective; CLM predicts token t + 1 at position t."""
        if self.objective == "mlm":
            return {"mlm": (*sparse_cross_entropy(y["masked_ids"], y_pred["mlm_logits"]),
                            ops.cast(y["masked_weights"], "float32"))}
        targets = ops.cast(x["token_ids"], "int32")[:, 1:]
        weights = ops.cast(x["padding_mask"], "float32")[:, 1:]
        return {"clm": (*sparse_cross_entropy(targets, y_pred["lm_logits"][:, :-1]), weights)}


def build_xlm_pretraining_model(config: ModelConfig, objectives: tuple[str, ...], seed: int | None,
                                dtype: str | None) -> XLMPretrainingModel:
    """XLM's factory (`ArchitectureSpec.pretraining_model`): its one objective, `mlm` (MLM and TLM batches) or `clm`."""
    if len(objectives) != 1:
        raise ValueError(f"an XLM model trains one objective, mlm or clm; got {', '.join(objectives)}")
    return XLMPretrainingModel(config, objective=objectives[0], dtype=dtype)
