"""Pretraining models: an encoder plus its architecture's heads and losses, trained by `model.fit`."""

from __future__ import annotations

from typing import Any, Mapping

import keras
from keras import ops

from tfbert.config import ModelConfig
from tfbert.models.encoder import Encoder
from tfbert.models.heads import MaskedLMHead, SentencePairHead

# The sentence-pair objective of each architecture that has one.
PAIR_OBJECTIVES = {"bert": "nsp", "albert": "sop"}
MLM_ARCHITECTURES = ("bert", "albert", "roberta")


def _masked_mean(values, weights):
    return ops.sum(values * weights) / ops.maximum(ops.sum(weights), 1.0)


@keras.saving.register_keras_serializable(package="tfbert")
class PretrainingModel(keras.Model):
    """BERT (MLM + NSP), ALBERT (MLM + SOP) or RoBERTa (MLM) on one shared encoder.

    Inputs: the encoder's inputs plus `masked_positions` `[batch, predictions]`.
    Outputs: `mlm_logits` `[batch, predictions, vocab]` and, for BERT and ALBERT,
    `nsp_logits` or `sop_logits` `[batch, 2]`, all float32.

    Labels for `fit` come as `y`: `masked_ids` and `masked_weights`
    `[batch, predictions]` (weight 0 for unused prediction slots) and
    `nsp_labels`/`sop_labels` `[batch]`. Losses are computed in float32 over
    the masked positions only; metrics are `mlm_loss`, `mlm_accuracy` and the
    pair objective's `*_loss` and `*_accuracy`.

    Example:
        >>> model = PretrainingModel(load_config("albert_tiny"))
        >>> model.compile(optimizer="adam")
        >>> model.fit(dataset)   # yields (inputs, labels) dicts
    """

    def __init__(self, config: ModelConfig | Mapping[str, Any], **kwargs):
        config = config if isinstance(config, ModelConfig) else ModelConfig.from_dict(config)
        if config.architecture not in MLM_ARCHITECTURES:
            raise ValueError(
                f"PretrainingModel covers {', '.join(MLM_ARCHITECTURES)}; "
                f"architecture {config.architecture!r} has its own model class"
            )
        policy = kwargs.pop("dtype", None)
        encoder_config = config.encoder
        encoder = Encoder(encoder_config, dtype=policy, name="encoder")
        inputs = dict(encoder.input)
        inputs["masked_positions"] = keras.Input(shape=(None,), dtype="int32", name="masked_positions")
        encoded = encoder({name: inputs[name] for name in encoder.input})

        mlm_head = MaskedLMHead(
            encoder.token_embedding,
            activation=encoder_config.activation,
            layer_norm_epsilon=encoder_config.layer_norm_epsilon,
            initializer_range=encoder_config.initializer_range,
            dtype=policy,
            name="mlm_head",
        )
        outputs = {"mlm_logits": mlm_head(encoded["sequence_output"], inputs["masked_positions"])}
        pair_objective = PAIR_OBJECTIVES.get(config.architecture)
        if pair_objective:
            pair_head = SentencePairHead(
                # BERT's NSP classifier has no dropout; ALBERT's SOP classifier has.
                dropout_rate=encoder_config.dropout_rate if pair_objective == "sop" else 0.0,
                initializer_range=encoder_config.initializer_range,
                dtype=policy,
                name=f"{pair_objective}_head",
            )
            outputs[f"{pair_objective}_logits"] = pair_head(encoded["pooled_output"])

        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.config = config
        self.encoder = encoder
        self.pair_objective = pair_objective
        self._policy_name = policy if policy is None or isinstance(policy, str) else policy.name
        self._trackers = {
            name: keras.metrics.Mean(name=name)
            for objective in ("mlm",) + ((pair_objective,) if pair_objective else ())
            for name in (f"{objective}_loss", f"{objective}_accuracy")
        }

    def objective_terms(self, labels: Mapping[str, Any], y_pred: Mapping[str, Any]) -> dict[str, Any]:
        """Per-objective float32 loss and accuracy for one batch, weighted over masked positions."""
        weights = ops.cast(labels["masked_weights"], "float32")
        masked_ids = ops.cast(labels["masked_ids"], "int32")
        logits = y_pred["mlm_logits"]
        token_loss = keras.losses.sparse_categorical_crossentropy(masked_ids, logits, from_logits=True)
        hits = ops.cast(ops.equal(ops.cast(ops.argmax(logits, axis=-1), "int32"), masked_ids), "float32")
        terms = {"mlm_loss": _masked_mean(token_loss, weights), "mlm_accuracy": _masked_mean(hits, weights)}
        if self.pair_objective:
            pair_labels = ops.cast(labels[f"{self.pair_objective}_labels"], "int32")
            pair_logits = y_pred[f"{self.pair_objective}_logits"]
            pair_loss = keras.losses.sparse_categorical_crossentropy(pair_labels, pair_logits, from_logits=True)
            pair_hits = ops.equal(ops.cast(ops.argmax(pair_logits, axis=-1), "int32"), pair_labels)
            terms[f"{self.pair_objective}_loss"] = ops.mean(pair_loss)
            terms[f"{self.pair_objective}_accuracy"] = ops.mean(ops.cast(pair_hits, "float32"))
        return terms

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        terms = self.objective_terms(y, y_pred)
        total = terms["mlm_loss"]
        if self.pair_objective:
            total = total + terms[f"{self.pair_objective}_loss"]
        return total

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        for name, value in self.objective_terms(y, y_pred).items():
            self._trackers[name].update_state(value)
        return self.get_metrics_result()

    def get_config(self) -> dict[str, Any]:
        return {
            "config": self.config.to_dict(),
            "name": self.name,
            "trainable": self.trainable,
            "dtype": self._policy_name,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "PretrainingModel":
        return cls(**config)
