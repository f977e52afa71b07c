"""Pretraining models: an encoder plus its architecture's heads and losses, trained by `model.fit`."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import keras
from keras import ops

from tfbert.config import ModelConfig, as_model_config
from tfbert.models.encoder import Encoder
from tfbert.models.family import FamilyPretrainingModel
from tfbert.models.heads import MaskedLMHead, SentencePairHead
from tfbert.models.objectives import Terms, WeightedObjectives, sparse_cross_entropy

# The sentence-pair objectives this model can add to MLM, and whether their classifier has dropout
# (BERT's NSP classifier has none; ALBERT's SOP classifier has).
PAIR_HEAD_DROPOUT = {"nsp": False, "sop": True}


@keras.saving.register_keras_serializable(package="tfbert")
class PretrainingModel(FamilyPretrainingModel, WeightedObjectives, keras.Model):
    """BERT (MLM + NSP), ALBERT (MLM + SOP) or RoBERTa (MLM) on one shared encoder.

    `objectives` defaults to the architecture's (`tfbert.architectures`); MLM alone
    (`("mlm",)`) works for every architecture this class builds.

    Inputs: the encoder's inputs plus `masked_positions` `[batch, predictions]`.
    Outputs: `mlm_logits` `[batch, predictions, vocab]` and, for BERT and ALBERT,
    `nsp_logits` or `sop_logits` `[batch, 2]`, all float32.

    Labels for `fit` come as `y`: `masked_ids` and `masked_weights`
    `[batch, predictions]` (weight 0 for unused prediction slots) and
    `nsp_labels`/`sop_labels` `[batch]`. Losses are computed in float32 over
    the masked positions only; metrics are `mlm_loss`, `mlm_accuracy` and the
    pair objective's `*_loss` and `*_accuracy`.

    Example:
        >>> from tfbert.config import load_config
        >>> model = PretrainingModel(load_config("albert_tiny"))
        >>> model.compile(optimizer="adam")
        >>> model.fit(dataset)   # (inputs, labels) dicts; traces a train step: ~10 s of CPU, tests/conformance trains each family  # doctest: +SKIP
    """

    config_arguments = ("objectives",)
    objective_sets = (("mlm",), ("mlm", "nsp"), ("mlm", "sop"))

    def __init__(self, config: ModelConfig | Mapping[str, Any], objectives: Iterable[str] | None = None, **kwargs):
        config = as_model_config(config)
        spec = config.spec
        objectives = self.check_family(spec, objectives)
        pair_objective = next((objective for objective in objectives if objective != "mlm"), None)
        policy = kwargs.pop("dtype", None)
        encoder_config = config.encoder
        encoder = Encoder(encoder_config, dtype=policy, name="encoder", architecture=config.architecture)
        inputs = dict(encoder.input)
        inputs["masked_positions"] = keras.Input(shape=(None,), dtype="int32", name="masked_positions")
        encoded = encoder.encode_at_positions({name: inputs[name] for name in encoder.input}, inputs["masked_positions"])

        mlm_head = MaskedLMHead.for_encoder(encoder.token_embedding, encoder_config, dtype=policy, name="mlm_head")
        outputs = {"mlm_logits": mlm_head(encoded["sequence_output"])}
        if pair_objective:
            pair_head = SentencePairHead(
                dropout_rate=encoder_config.dropout_rate if PAIR_HEAD_DROPOUT[pair_objective] else 0.0,
                initializer_range=encoder_config.initializer_range,
                dtype=policy,
                name=f"{pair_objective}_head",
            )
            outputs[f"{pair_objective}_logits"] = pair_head(encoded["pooled_output"])

        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        if not pair_objective and encoder_config.pooler:
            # MLM alone never reaches the pooler; freezing it keeps it out of the optimizer.
            encoder.get_layer("pooler").trainable = False
        self.config = config
        self.objectives = objectives
        self.encoder = encoder
        self.pair_objective = pair_objective
        self.record_dtype_policy(policy)
        self.track_objectives(("mlm",) + ((pair_objective,) if pair_objective else ()))

    def objective_terms(self, x, y, y_pred) -> dict[str, Terms]:
        """Each objective's per-element float32 `(loss, hit, weight)` for one batch.

        MLM terms are `[batch, predictions]`, weighted by `masked_weights`; the
        pair objective's are `[batch]` with weight 1.
        """
        token_loss, token_hits = sparse_cross_entropy(y["masked_ids"], y_pred["mlm_logits"])
        terms = {"mlm": (token_loss, token_hits, ops.cast(y["masked_weights"], "float32"))}
        if self.pair_objective:
            pair_loss, pair_hits = sparse_cross_entropy(
                y[f"{self.pair_objective}_labels"], y_pred[f"{self.pair_objective}_logits"]
            )
            terms[self.pair_objective] = (pair_loss, pair_hits, ops.ones_like(pair_loss))
        return terms


def build_pretraining_model(config: ModelConfig, objectives: tuple[str, ...], seed: int | None,
                            dtype: str | None) -> PretrainingModel:
    """`PretrainingModel`: MLM plus, when asked, one sentence-pair objective (NSP or SOP); BERT's, ALBERT's,
    RoBERTa's factory (`ArchitectureSpec.pretraining_model`)."""
    return PretrainingModel(config, objectives=objectives, dtype=dtype)
