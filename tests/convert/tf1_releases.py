"""TF1 release folders for tests: random-initialised Hugging Face models saved under Google's original names.

The renaming here follows google-research/bert, albert and electra (`modeling.py`,
`run_pretraining.py`) name by name, independently of tfbert's format entries, so a test that
converts these folders checks tfbert's names against the originals'. Checkpoints are written
with the `SaveV2` op that `tf.compat.v1.train.Saver` runs: `PREFIX.index` + `PREFIX.data-00000-of-00001`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import tensorflow as tf

TOLERANCE = 1e-4


def write_checkpoint(prefix: Path, tensors: dict[str, np.ndarray]) -> None:
    """A TF1 (V2 bundle) checkpoint holding exactly `tensors`, under their names."""
    names = sorted(tensors)
    tf.raw_ops.SaveV2(prefix=str(prefix), tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(tensors[name]) for name in names])


class Renamer:
    """Copies a PyTorch state dict's tensors under TF1 names: dense kernels transposed, LayerNorm gamma/beta."""

    def __init__(self, state):
        self.state = {name: value.detach().numpy() for name, value in state.items()}
        self.tensors: dict[str, np.ndarray] = {}

    def table(self, google: str, hf: str) -> None:
        self.tensors[google] = self.state[hf]

    def dense(self, google: str, hf: str) -> None:
        self.tensors[f"{google}/kernel"] = self.state[f"{hf}.weight"].T.copy()
        self.tensors[f"{google}/bias"] = self.state[f"{hf}.bias"]

    def norm(self, google: str, hf: str) -> None:
        self.tensors[f"{google}/gamma"] = self.state[f"{hf}.weight"]
        self.tensors[f"{google}/beta"] = self.state[f"{hf}.bias"]

    def embeddings(self, google: str, hf: str) -> None:
        for kind in ("word", "position", "token_type"):
            self.table(f"{google}/embeddings/{kind}_embeddings", f"{hf}.embeddings.{kind}_embeddings.weight")
        self.norm(f"{google}/embeddings/LayerNorm", f"{hf}.embeddings.LayerNorm")

    def bert_layers(self, google: str, hf: str, layers: int) -> None:
        """`modeling.py`'s `transformer_model`: `{google}/encoder/layer_{i}/...`."""
        for i in range(layers):
            g, h = f"{google}/encoder/layer_{i}/", f"{hf}.encoder.layer.{i}."
            for part in ("query", "key", "value"):
                self.dense(f"{g}attention/self/{part}", f"{h}attention.self.{part}")
            self.dense(f"{g}attention/output/dense", f"{h}attention.output.dense")
            self.norm(f"{g}attention/output/LayerNorm", f"{h}attention.output.LayerNorm")
            self.dense(f"{g}intermediate/dense", f"{h}intermediate.dense")
            self.dense(f"{g}output/dense", f"{h}output.dense")
            self.norm(f"{g}output/LayerNorm", f"{h}output.LayerNorm")

    def pair_head(self, hf: str) -> None:
        """`cls/seq_relationship`: `output_weights` is [2, hidden], as PyTorch's Linear weight."""
        self.table("cls/seq_relationship/output_weights", f"{hf}.weight")
        self.table("cls/seq_relationship/output_bias", f"{hf}.bias")

    def optimizer_leftovers(self) -> None:
        """What released checkpoints may also hold: the step and AdamWeightDecay/LAMB slots."""
        self.tensors["global_step"] = np.int64(1_000_000)
        first = sorted(name for name in self.tensors if name.endswith("/kernel"))[0]
        self.tensors[f"{first}/adam_m"] = np.zeros_like(self.tensors[first])
        self.tensors[f"{first}/adam_v"] = np.zeros_like(self.tensors[first])


def bert_tensors(model, layers: int) -> dict[str, np.ndarray]:
    """`BertForPreTraining`'s weights under google-research/bert's names."""
    renamer = Renamer(model.state_dict())
    renamer.embeddings("bert", "bert")
    renamer.bert_layers("bert", "bert", layers)
    renamer.dense("bert/pooler/dense", "bert.pooler.dense")
    renamer.dense("cls/predictions/transform/dense", "cls.predictions.transform.dense")
    renamer.norm("cls/predictions/transform/LayerNorm", "cls.predictions.transform.LayerNorm")
    renamer.table("cls/predictions/output_bias", "cls.predictions.bias")
    renamer.pair_head("cls.seq_relationship")
    renamer.optimizer_leftovers()
    return renamer.tensors


def albert_tensors(model, groups: int, inner: int) -> dict[str, np.ndarray]:
    """`AlbertForPreTraining`'s weights under google-research/albert's names."""
    renamer = Renamer(model.state_dict())
    renamer.embeddings("bert", "albert")
    renamer.dense("bert/encoder/embedding_hidden_mapping_in", "albert.encoder.embedding_hidden_mapping_in")
    for g in range(groups):
        for i in range(inner):
            google = f"bert/encoder/transformer/group_{g}/inner_group_{i}/"
            hf = f"albert.encoder.albert_layer_groups.{g}.albert_layers.{i}."
            for part in ("query", "key", "value"):
                renamer.dense(f"{google}attention_1/self/{part}", f"{hf}attention.{part}")
            renamer.dense(f"{google}attention_1/output/dense", f"{hf}attention.dense")
            renamer.norm(f"{google}LayerNorm", f"{hf}attention.LayerNorm")
            renamer.dense(f"{google}ffn_1/intermediate/dense", f"{hf}ffn")
            renamer.dense(f"{google}ffn_1/intermediate/output/dense", f"{hf}ffn_output")
            renamer.norm(f"{google}LayerNorm_1", f"{hf}full_layer_layer_norm")
    renamer.dense("bert/pooler/dense", "albert.pooler")
    renamer.dense("cls/predictions/transform/dense", "predictions.dense")
    renamer.norm("cls/predictions/transform/LayerNorm", "predictions.LayerNorm")
    renamer.table("cls/predictions/output_bias", "predictions.bias")
    renamer.pair_head("sop_classifier.classifier")
    renamer.optimizer_leftovers()
    return renamer.tensors


def electra_tensors(discriminator, generator, layers: int, generator_layers: int) -> dict[str, np.ndarray]:
    """`ElectraForPreTraining` + `ElectraForMaskedLM` under google-research/electra's names (shared embeddings)."""
    renamer = Renamer(discriminator.state_dict())
    renamer.embeddings("electra", "electra")
    renamer.dense("electra/embeddings_project", "electra.embeddings_project")
    renamer.bert_layers("electra", "electra", layers)
    renamer.dense("discriminator_predictions/dense", "discriminator_predictions.dense")
    renamer.dense("discriminator_predictions/dense_1", "discriminator_predictions.dense_prediction")
    tensors = renamer.tensors
    renamer = Renamer(generator.state_dict())
    renamer.dense("generator/embeddings_project", "electra.embeddings_project")
    renamer.bert_layers("generator", "electra", generator_layers)
    renamer.dense("generator_predictions/dense", "generator_predictions.dense")
    renamer.norm("generator_predictions/LayerNorm", "generator_predictions.LayerNorm")
    renamer.table("generator_predictions/output_bias", "generator_lm_head.bias")
    renamer.optimizer_leftovers()
    return {**tensors, **renamer.tensors}


def write_vocab(path: Path, size: int) -> list[str]:
    """A WordPiece vocabulary of `size` tokens: BERT's specials, letters, pieces and words."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    words = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", ".", ","]
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *letters, *(f"##{c}" for c in letters), *words]
    tokens += [f"word{i}" for i in range(size - len(tokens))]
    path.write_text("\n".join(tokens[:size]) + "\n", encoding="utf-8")
    return tokens[:size]


def write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def padded_batch(vocab_size: int, seed: int = 0, length: int = 12, predictions: int = 3):
    """Token ids, segments, padding mask (three rows of lengths 12, 9, 5) and masked positions."""
    rng = np.random.default_rng(seed)
    lengths = [length, length - 3, 5]
    ids = rng.integers(5, vocab_size, size=(3, length)).astype("int32")
    mask = np.zeros((3, length), "int32")
    segments = np.zeros((3, length), "int32")
    positions = np.zeros((3, predictions), "int32")
    for row, n in enumerate(lengths):
        mask[row, :n] = 1
        segments[row, n // 2: n] = 1
        ids[row, n:] = 0
        positions[row] = rng.choice(np.arange(1, n), size=predictions, replace=False)
    return {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}, positions


def close_on_real_tokens(ours, theirs, mask) -> None:
    keep = np.asarray(mask).astype(bool)
    np.testing.assert_allclose(np.asarray(ours)[keep], np.asarray(theirs)[keep], atol=TOLERANCE, rtol=0)
