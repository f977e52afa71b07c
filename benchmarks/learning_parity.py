"""Learning parity: tfbert against the Hugging Face PyTorch implementation on identical runs.

For one family (ALBERT MLM + SOP, ELECTRA RTD, SpanBERT MLM + SBO) and each seed, the script

1. makes the pretraining batches ONCE with tfbert's data pipeline (masking, sentence pairs,
   spans) from 9/10 of the bundled World English Bible's chapters, as NumPy arrays, and a fixed
   held-out set from the other 1/10 (the same for every seed);
2. builds the tfbert model (the seed sets its initialisation) and copies its initial weights into
   the Hugging Face model with tfbert's own converter (`tfbert.convert.to_huggingface`), so both
   start from identical weights; the step-0 losses on the first batch must agree to 1e-4 (a check
   of the forward pass and of the weight map);
3. trains both on exactly those batches with one plain schedule: AdamW (beta 0.9/0.999, epsilon
   1e-6, weight decay 0.01 except LayerNorm and biases), global-norm clipping at 1.0, linear
   warm-up over 10% of the steps to `--learning-rate`, then linear decay to 0 (tfbert's `bert`
   recipe with the rate given; `torch.optim.AdamW` with the same settings);
4. scores both on the held-out batches every `--eval-every` steps with one NumPy metric function:
   MLM accuracy and SOP accuracy (ALBERT), RTD AUC and generator MLM accuracy (ELECTRA), MLM and
   SBO accuracy (SpanBERT).

Hugging Face has no SpanBERT class with the span boundary head, so the reference is
`BertForMaskedLM` plus an SBO head written here as in the SpanBERT paper (two layers of
Linear + GeLU + LayerNorm over [left boundary, right boundary, relative position embedding],
decoded by the tied word embeddings). ELECTRA's reference is `ElectraForMaskedLM` (generator) and
`ElectraForPreTraining` (discriminator) sharing one embeddings module, as tfbert and the paper do;
the generator's samples are drawn by the Gumbel-max trick in both (different random streams).

tfbert trains with XLA (`jit_compile=True`, as `tfbert pretrain` does; `--no-jit-compile` for
graph mode); the step-0 check compares its loss eagerly, under XLA and in PyTorch. The script
prints each side's CPU time (training per step, evaluation) and, at the end, a table per metric
and evaluation step: mean ± sd (min–max) over the seeds for both, and whether tfbert's mean lies
inside the reference's min–max.

    python benchmarks/learning_parity.py --family albert --seeds 3 --steps 600
    python benchmarks/learning_parity.py --family electra --seeds 3 --steps 200 --eval-every 50 --heldout-batches 10

Seeds can run in separate processes (in parallel) and be tabled together: `--record FILE` appends
each seed's curves to FILE and prints the table over every seed recorded there with the same
family, steps, batch, sequence length, held-out batches and learning rate:

    python benchmarks/learning_parity.py --family albert --seeds 1 --first-seed 1 --record albert.jsonl
    python benchmarks/learning_parity.py --family albert --seeds 1 --first-seed 2 --record albert.jsonl

Needs `torch` and `transformers` (the CPU wheels are enough).
"""

from __future__ import annotations

from pathlib import Path


import argparse  # noqa: E402
import contextlib  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Callable  # noqa: E402

from learning_common import machine  # noqa: E402  (sets up sys.path for tests/ helpers)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

import tfbert.corpus  # noqa: E402
from learning_electra import roc_auc  # noqa: E402
from tfbert import architectures  # noqa: E402
from tfbert.config import load_config  # noqa: E402
from tfbert.convert.to_huggingface import huggingface_checkpoints  # noqa: E402
from tfbert.text.vocab_training import train_sentencepiece, train_wordpiece  # noqa: E402
from tfbert.training.optimization import create_optimizer  # noqa: E402
from tfbert.training.pretraining_config import config_for_tokenizer  # noqa: E402
from tfbert.training.pretraining_inputs import documents_from, pretraining_examples  # noqa: E402
from tiny_recipes import tiny_electra, tiny_spanbert  # noqa: E402

Batch = dict[str, np.ndarray]
WEIGHT_DECAY, BETAS, EPSILON, CLIP = 0.01, (0.9, 0.999), 1e-6, 1.0


def unfactorized(config):
    """`config` with embeddings as wide as the encoder, as BERT (tiny_spanbert keeps spanbert_base's 768)."""
    return config.replace(encoder=config.encoder.replace(embedding_size=config.encoder.hidden_size))


@dataclasses.dataclass
class Family:
    """What differs between the families: config, vocabulary, predictions per sequence, metrics."""

    config: Callable
    vocabulary: str
    max_predictions: int
    metrics: tuple[str, ...]


FAMILIES = {
    "albert": Family(lambda: load_config("albert_tiny"), "sentencepiece", 9, ("mlm_accuracy", "sop_accuracy")),
    "electra": Family(lambda: tiny_electra(hidden=128, layers=2, heads=2, embedding=128), "wordpiece", 10,
                      ("rtd_auc", "mlm_accuracy")),
    "spanbert": Family(lambda: unfactorized(tiny_spanbert(hidden=128, layers=2, heads=2)), "wordpiece", 12,
                       ("mlm_accuracy", "sbo_accuracy")),
}


# ---------------------------------------------------------------------------------------------- data

def numpy_batches(dataset: tf.data.Dataset, count: int) -> list[Batch]:
    """The first `count` `(inputs, labels)` batches of `dataset`, flattened into one dict of arrays each."""
    return [{**inputs, **labels} for inputs, labels in dataset.take(count).as_numpy_iterator()]


def make_data(family: Family, args, folder: Path):
    """The config, the held-out batches and a function seed -> training batches."""
    train, held_out = tfbert.corpus.write_held_out_split(tfbert.corpus.chapters(), folder, held_out_index=9)
    if family.vocabulary == "sentencepiece":
        tokenizer = train_sentencepiece(str(train), 4000, folder / "vocab", lowercase=True)
    else:
        tokenizer = train_wordpiece(str(train), 2000, folder / "vocab")
    config = config_for_tokenizer(family.config(), tokenizer)

    def batches(path: Path, seed: int, count: int) -> list[Batch]:
        return numpy_batches(pretraining_examples(
            config, tokenizer, documents_from(str(path)).repeat(), batch_size=args.batch_size,
            sequence_length=args.sequence_length, max_predictions=family.max_predictions, seed=seed), count)

    return config, batches(held_out, 10_000, args.heldout_batches), lambda seed: batches(train, seed, args.steps)


def split(batch: Batch, model: keras.Model) -> tuple[dict, dict]:
    inputs = {name: batch[name] for name in model.input}
    return inputs, {name: value for name, value in batch.items() if name not in inputs}


# ------------------------------------------------------------------------------------------- metrics

def accuracy(logits: np.ndarray, ids: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """(hits, weight) of argmax predictions."""
    return float(((logits.argmax(-1) == ids) * weights).sum()), float(weights.sum())


def score(outputs: list[dict], family_name: str) -> dict[str, float]:
    """Held-out metrics from per-batch outputs (NumPy; the same function for both frameworks)."""
    def ratio(key):
        hits = sum(output[key][0] for output in outputs)
        return hits / max(sum(output[key][1] for output in outputs), 1.0)

    if family_name == "electra":
        scores = np.concatenate([output["rtd_scores"] for output in outputs])
        labels = np.concatenate([output["rtd_labels"] for output in outputs])
        return {"rtd_auc": roc_auc(scores, labels), "mlm_accuracy": ratio("mlm")}
    if family_name == "albert":
        return {"mlm_accuracy": ratio("mlm"), "sop_accuracy": ratio("sop")}
    return {"mlm_accuracy": ratio("mlm"), "sbo_accuracy": ratio("sbo")}


# -------------------------------------------------------------------------------------------- tfbert

def tfbert_model(config, family_name: str, seed: int) -> keras.Model:
    keras.utils.set_random_seed(seed)
    spec = architectures.get(config.architecture)
    if family_name == "electra":
        from tfbert.families.electra.models import ElectraPretrainingModel

        return ElectraPretrainingModel(config, seed=seed)
    return spec.pretraining_model(config, spec.default_objectives, seed, None)


def family_outputs(out: dict, batch: Batch, family_name: str, rtd_labels: np.ndarray | None = None) -> dict:
    """What `score` reads from one held-out batch, the same for both frameworks: MLM accuracy and the
    family's own (SOP accuracy, SBO accuracy, or the RTD scores and labels at real positions)."""
    weights = batch["masked_weights"]
    result = {"mlm": accuracy(out["mlm_logits"], batch["masked_ids"], weights)}
    if family_name == "albert":
        result["sop"] = accuracy(out["sop_logits"], batch["sop_labels"], np.ones(len(batch["sop_labels"])))
    elif family_name == "spanbert":
        result["sbo"] = accuracy(out["sbo_logits"], batch["masked_ids"], weights)
    else:
        real = batch["padding_mask"] > 0
        result.update(rtd_scores=out["rtd_logits"][real], rtd_labels=rtd_labels[real])
    return result


def tfbert_evaluator(model: keras.Model, family_name: str, jit_compile: bool) -> Callable[[Batch], dict]:
    """batch -> what `score` reads, with the inference pass compiled as the training step is."""
    forward = tf.function(lambda inputs: model(inputs, training=False), jit_compile=jit_compile)

    def outputs(batch: Batch) -> dict:
        inputs, labels = split(batch, model)
        out = {name: np.asarray(value) for name, value in forward(inputs).items()}
        if family_name == "electra":
            replaced = np.asarray(model.replaced_labels(inputs, labels, out))
            return family_outputs(out, batch, family_name, replaced)
        return family_outputs(out, batch, family_name)

    return outputs


def tfbert_loss(model: keras.Model, batch: Batch, jit_compile: bool = False) -> float:
    """tfbert's loss on `batch` (inference pass), eagerly or compiled with XLA as the training step is."""
    inputs, labels = split(batch, model)

    def loss(inputs, labels):
        return model.compute_loss(inputs, labels, model(inputs, training=False), training=False)

    return float(tf.function(loss, jit_compile=True)(inputs, labels) if jit_compile else loss(inputs, labels))


# ------------------------------------------------------------------------------------- Hugging Face

def gather(sequence: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    return torch.gather(sequence, 1, positions.long()[:, :, None].expand(-1, -1, sequence.shape[-1]))


class SpanBoundaryHead(torch.nn.Module):
    """SpanBERT's SBO head (Joshi et al. 2020, eq. 1): written here because transformers has none."""

    def __init__(self, hidden: int, embedding: torch.nn.Embedding, span_positions: int, eps: float):
        super().__init__()
        self.position_embedding = torch.nn.Embedding(span_positions, hidden)
        self.first = torch.nn.Linear(3 * hidden, hidden)
        self.first_norm = torch.nn.LayerNorm(hidden, eps=eps)
        self.second = torch.nn.Linear(hidden, embedding.embedding_dim)
        self.second_norm = torch.nn.LayerNorm(embedding.embedding_dim, eps=eps)
        self.embedding = embedding
        self.bias = torch.nn.Parameter(torch.zeros(embedding.num_embeddings))

    def forward(self, sequence, left, right, offsets):
        offsets = offsets.long().clamp(0, self.position_embedding.num_embeddings - 1)
        boundary = torch.cat([gather(sequence, left), gather(sequence, right), self.position_embedding(offsets)], -1)
        gelu = torch.nn.functional.gelu
        hidden = self.first_norm(gelu(self.first(boundary)))
        hidden = self.second_norm(gelu(self.second(hidden)))
        return hidden @ self.embedding.weight.T + self.bias

    def load_keras(self, head) -> None:
        """Copy the weights of tfbert's `SpanBoundaryHead` (Keras kernels are [in, out])."""
        pairs = [(self.position_embedding.weight, head.position_embedding.embeddings),
                 (self.first.weight, head.first.kernel, True), (self.first.bias, head.first.bias),
                 (self.first_norm.weight, head.first_norm.gamma), (self.first_norm.bias, head.first_norm.beta),
                 (self.second.weight, head.second.kernel, True), (self.second.bias, head.second.bias),
                 (self.second_norm.weight, head.second_norm.gamma), (self.second_norm.bias, head.second_norm.beta),
                 (self.bias, head.output_bias)]
        with torch.no_grad():
            for target, source, *transpose in pairs:
                value = np.asarray(source)
                target.copy_(torch.from_numpy(value.T.copy() if transpose else value))


def hf_module(checkpoint) -> torch.nn.Module:
    """The transformers model of a tfbert checkpoint, with its weights (tied weights re-tied)."""
    settings = {key: value for key, value in checkpoint.config.items() if key not in ("architectures", "dtype")}
    config = transformers.CONFIG_MAPPING[settings.pop("model_type")](**settings)
    model = getattr(transformers, checkpoint.config["architectures"][0])(config)
    state = {name: torch.from_numpy(np.array(value)) for name, value in checkpoint.tensors.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    untied = [name for name in missing if not name.endswith(("decoder.weight", "decoder.bias", "lm_head.weight",
                                                             "position_ids"))]
    if unexpected or untied:
        raise RuntimeError(f"weight map mismatch: unexpected {unexpected}, missing {untied}")
    model.tie_weights()
    return model


class Reference(torch.nn.Module):
    """The Hugging Face model(s) of one family with tfbert's heads' inputs and outputs."""

    def __init__(self, tf_model: keras.Model, family_name: str, seed: int):
        super().__init__()
        self.family_name = family_name
        checkpoints = huggingface_checkpoints(tf_model, family_name)
        modules = {checkpoint.subfolder: hf_module(checkpoint) for checkpoint in checkpoints}
        if family_name == "electra":
            self.discriminator, self.generator = modules["discriminator"], modules["generator"]
            # One embeddings module for both (tfbert's generator uses the discriminator's embeddings layer).
            self.generator.electra.embeddings = self.discriminator.electra.embeddings
            self.generator.generator_lm_head.weight = self.discriminator.electra.embeddings.word_embeddings.weight
            self.sampler = torch.Generator().manual_seed(seed)
        else:
            self.model = modules[""]
        if family_name == "spanbert":
            encoder = tf_model.config.encoder
            head = tf_model.get_layer("sbo_head")
            self.sbo = SpanBoundaryHead(encoder.hidden_size, self.model.bert.embeddings.word_embeddings,
                                        head.span_positions, encoder.layer_norm_epsilon)
            self.sbo.load_keras(head)

    def encoder_inputs(self, batch: dict) -> dict:
        return {"input_ids": batch["token_ids"], "attention_mask": batch["padding_mask"],
                "token_type_ids": batch["segment_ids"]}

    def forward(self, batch: dict) -> tuple[torch.Tensor, dict]:
        """The training loss and the outputs the metrics read."""
        ce = torch.nn.functional.cross_entropy
        weights = batch["masked_weights"].float()

        def mlm_loss(logits, ids):
            losses = ce(logits.flatten(0, 1), ids.long().flatten(), reduction="none").view(ids.shape)
            return (losses * weights).sum() / weights.sum().clamp(min=1.0)

        if self.family_name == "albert":
            sequence, pooled = self.model.albert(**self.encoder_inputs(batch), return_dict=False)[:2]
            mlm = self.model.predictions(gather(sequence, batch["masked_positions"]))
            sop = self.model.sop_classifier(pooled)
            loss = mlm_loss(mlm, batch["masked_ids"]) + ce(sop, batch["sop_labels"].long())
            return loss, {"mlm_logits": mlm, "sop_logits": sop}
        if self.family_name == "spanbert":
            sequence = self.model.bert(**self.encoder_inputs(batch), return_dict=False)[0]
            mlm = self.model.cls(gather(sequence, batch["masked_positions"]))
            sbo = self.sbo(sequence, batch["span_left_positions"], batch["span_right_positions"], batch["span_offsets"])
            loss = mlm_loss(mlm, batch["masked_ids"]) + mlm_loss(sbo, batch["masked_ids"])
            return loss, {"mlm_logits": mlm, "sbo_logits": sbo}
        return self.electra(batch, mlm_loss)

    def electra(self, batch: dict, mlm_loss) -> tuple[torch.Tensor, dict]:
        generated = self.generator.electra(**self.encoder_inputs(batch), return_dict=False)[0]
        mlm = self.generator.generator_lm_head(
            self.generator.generator_predictions(gather(generated, batch["masked_positions"])))
        if "corrupted_ids" in batch:  # the step-0 check: tfbert's own sample
            corrupted = batch["corrupted_ids"].long()
        else:
            uniform = torch.rand(mlm.shape, generator=self.sampler).clamp(min=1e-9)
            sampled = (mlm.detach() - torch.log(-torch.log(uniform))).argmax(-1)
            corrupted = replace_at(batch["token_ids"].long(), batch["masked_positions"].long(), sampled)
        weights = batch["masked_weights"] > 0
        original = replace_at(batch["token_ids"].long(), batch["masked_positions"].long() * weights,
                              batch["masked_ids"].long())
        labels = (corrupted != original).float()
        inputs = {**self.encoder_inputs(batch), "input_ids": corrupted}
        rtd = self.discriminator(**inputs).logits
        real = batch["padding_mask"].float()
        rtd_loss = (torch.nn.functional.binary_cross_entropy_with_logits(rtd, labels, reduction="none") * real).sum()
        rtd_loss = rtd_loss / real.sum()
        loss = mlm_loss(mlm, batch["masked_ids"]) + RTD_WEIGHT * rtd_loss
        return loss, {"mlm_logits": mlm, "rtd_logits": rtd, "rtd_labels": labels}


RTD_WEIGHT = 50.0


def replace_at(token_ids: torch.Tensor, positions: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """`token_ids` with `values` written at `positions`, never at position 0 (unused slots point there)."""
    written = token_ids.clone()
    rows = torch.arange(token_ids.shape[0])[:, None].expand_as(positions)
    keep = positions > 0
    written[rows[keep], positions[keep]] = values[keep]
    return written


def torch_batch(batch: Batch) -> dict:
    return {name: torch.from_numpy(np.asarray(value)) for name, value in batch.items()}


def reference_outputs(reference: Reference, batch: Batch, family_name: str) -> dict:
    with torch.no_grad():
        out = {name: value.numpy() for name, value in reference(torch_batch(batch))[1].items()}
    return family_outputs(out, batch, family_name, out.get("rtd_labels"))


def schedule(steps: int, peak: float) -> Callable[[int], float]:
    """tfbert's WarmupLinearDecay as a multiplier of `peak` (warm-up over 10% of the steps)."""
    warmup = steps // 10

    def factor(step: int) -> float:
        if step < warmup:
            return step / max(warmup, 1)
        return 1.0 - min(max((step - warmup) / max(steps - warmup, 1), 0.0), 1.0)

    return factor


def torch_optimizer(reference: Reference, steps: int, peak: float):
    named = {name: parameter for name, parameter in reference.named_parameters()}
    no_decay = [p for name, p in named.items() if name.endswith("bias") or "norm" in name.lower()]
    decay = [p for name, p in named.items() if not (name.endswith("bias") or "norm" in name.lower())]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=peak, betas=BETAS, eps=EPSILON)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, schedule(steps, peak))


# ------------------------------------------------------------------------------------------ the runs

def step0_check(tf_model, reference: Reference, batch: Batch, family_name: str) -> dict[str, float]:
    """tfbert's loss on `batch` eagerly and under XLA, and the reference's, with identical weights
    (ELECTRA: every loss on tfbert's one generator sample)."""
    if family_name == "electra":
        inputs, _ = split(batch, tf_model)
        batch = {**batch, "corrupted_ids": np.asarray(tf_model(inputs, training=False)["corrupted_ids"])}
        losses = {"tfbert": tfbert_loss_with_sample(tf_model, batch),
                  "tfbert XLA": tfbert_loss_with_sample(tf_model, batch, jit_compile=True)}
    else:
        losses = {"tfbert": tfbert_loss(tf_model, batch), "tfbert XLA": tfbert_loss(tf_model, batch, jit_compile=True)}
    reference.eval()
    with torch.no_grad():
        losses["Hugging Face"] = float(reference(torch_batch(batch))[0])
    return losses


def tfbert_loss_with_sample(model, batch: Batch, jit_compile: bool = False) -> float:
    """tfbert's ELECTRA loss for a given corrupted input (its sampler replaced by that sample)."""
    inputs, labels = split(batch, model)

    def loss(inputs, labels, corrupted):
        out = dict(model(inputs, training=False))
        out["corrupted_ids"] = corrupted
        discriminated = model.discriminator({name: inputs[name] for name in model.discriminator.input} |
                                            {"token_ids": corrupted}, training=False)
        out["rtd_logits"] = model.get_layer("discriminator_head")(discriminated["sequence_output"])
        return model.compute_loss(inputs, labels, out, training=False)

    loss = tf.function(loss, jit_compile=True) if jit_compile else loss
    return float(loss(inputs, labels, batch["corrupted_ids"]))


class CpuClock:
    """CPU seconds spent evaluating and training, the training ones per block of steps."""

    def __init__(self):
        self.evaluation = 0.0
        self.training: list[tuple[int, float]] = []  # (steps, CPU seconds) per `training_steps` block

    @contextlib.contextmanager
    def evaluating(self):
        start = time.process_time()
        yield
        self.evaluation += time.process_time() - start

    @contextlib.contextmanager
    def training_steps(self, steps: int):
        start = time.process_time()
        yield
        self.training.append((steps, time.process_time() - start))

    def summary(self, first_steps: int) -> str:
        """Training CPU in total, per step after the first `first_steps` (compilation, warm-up), evaluation."""
        done, later_steps, later_seconds = 0, 0, 0.0
        for steps, seconds in self.training:
            if done >= first_steps:
                later_steps, later_seconds = later_steps + steps, later_seconds + seconds
            done += steps
        per_step = f"{later_seconds / later_steps:.3f} s a step after step {first_steps}" if later_steps else "n/a"
        total = sum(seconds for _, seconds in self.training)
        return f"CPU: training {total:.0f} s ({per_step}), evaluation {self.evaluation:.0f} s"


def run_tfbert(model, batches, heldout, family_name, args, clock: CpuClock) -> dict[int, dict]:
    model.compile(optimizer=create_optimizer("bert", args.steps, learning_rate=args.learning_rate,
                                             warmup_steps=args.steps // 10, clipnorm=CLIP),
                  jit_compile=args.jit_compile)
    outputs = tfbert_evaluator(model, family_name, args.jit_compile)

    def evaluate():
        with clock.evaluating():
            return score([outputs(batch) for batch in heldout], family_name)

    curve = {0: evaluate()}
    for start in range(0, args.steps, args.eval_every):
        chunk = batches[start:start + args.eval_every]
        stacked = {name: np.stack([batch[name] for batch in chunk]) for name in chunk[0]}
        dataset = tf.data.Dataset.from_tensor_slices(stacked).map(lambda batch: split(batch, model))
        with clock.training_steps(len(chunk)):
            model.fit(dataset, epochs=1, verbose=0)
        curve[start + len(chunk)] = evaluate()
    return curve


def run_reference(reference: Reference, batches, heldout, family_name, args, clock: CpuClock) -> dict[int, dict]:
    optimizer, lr_schedule = torch_optimizer(reference, args.steps, args.learning_rate)

    def evaluate():
        reference.eval()
        with clock.evaluating():
            return score([reference_outputs(reference, batch, family_name) for batch in heldout], family_name)

    curve = {0: evaluate()}
    for step, batch in enumerate(batches, 1):
        reference.train()
        with clock.training_steps(1):
            loss = reference(torch_batch(batch))[0]
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(reference.parameters(), CLIP)
            optimizer.step()
            lr_schedule.step()
        if step % args.eval_every == 0 or step == len(batches):
            curve[step] = evaluate()
    return curve


def spread(values: list[float]) -> str:
    """mean ± sample standard deviation (min–max)."""
    values = np.asarray(values)
    deviation = values.std(ddof=1) if len(values) > 1 else 0.0
    return f"{values.mean():.3f} ± {deviation:.3f} ({values.min():.3f}–{values.max():.3f})"


RUN_SETTINGS = ("family", "steps", "batch_size", "sequence_length", "heldout_batches", "learning_rate")


def record(path: Path, args, seed: int, side: str, curve: dict[int, dict]) -> None:
    """Append one seed's curve to the JSON-lines file `path` (runs of one family can then be split
    over processes, one seed each, and tabled together)."""
    line = {**{name: getattr(args, name) for name in RUN_SETTINGS}, "seed": seed, "side": side,
            "jit_compile": args.jit_compile, "curve": {str(step): scores for step, scores in curve.items()}}
    with path.open("a") as file:
        file.write(json.dumps(line) + "\n")


def recorded_curves(path: Path, args) -> dict[str, list[dict]]:
    """The curves in `path` from runs with this run's settings, the newest per side and seed."""
    newest: dict[tuple[str, int], dict] = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if all(entry[name] == getattr(args, name) for name in RUN_SETTINGS):
            newest[entry["side"], entry["seed"]] = {int(step): scores for step, scores in entry["curve"].items()}
    return {side: [curve for (name, _), curve in sorted(newest.items()) if name == side]
            for side in ("tfbert", "Hugging Face")}


def print_table(curves: dict[str, list[dict]], metrics: tuple[str, ...]) -> None:
    """Per metric and evaluation step (those every curve has): both sides' mean ± sd (min–max) over
    the seeds, and whether tfbert's mean lies inside the reference's min–max."""
    seeds = len(curves["tfbert"])
    steps = sorted(set.intersection(*(set(curve) for side in curves.values() for curve in side)))
    print(f"\n| metric | step | tfbert (mean ± sd, min–max over {seeds} seeds) | Hugging Face "
          f"({len(curves['Hugging Face'])} seeds) | tfbert mean inside HF min–max |")
    print("|---|---:|---:|---:|:---:|")
    for metric in metrics:
        for step in steps:
            tfbert, reference = ([curve[step][metric] for curve in curves[name]] for name in ("tfbert", "Hugging Face"))
            inside = min(reference) <= np.mean(tfbert) <= max(reference)
            print(f"| {metric} | {step} | {spread(tfbert)} | {spread(reference)} | {'yes' if inside else 'no'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", choices=sorted(FAMILIES), required=True)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--eval-every", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--heldout-batches", type=int, default=20)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--first-seed", type=int, default=0, help="run seeds first-seed .. first-seed + seeds - 1")
    parser.add_argument("--record", type=Path, help="append each seed's curves to this JSON-lines file and "
                        "print the table over every seed recorded there with these settings")
    parser.add_argument("--jit-compile", action=argparse.BooleanOptionalAction, default=True,
                        help="compile tfbert's train step and evaluation with XLA, as `tfbert pretrain` does")
    args = parser.parse_args()
    torch.set_num_threads(1)  # two spinning OpenMP threads waste CPU on a shared 2-core machine
    family = FAMILIES[args.family]
    config, heldout, training_batches = make_data(family, args, Path(tempfile.mkdtemp()))
    curves = {"tfbert": [], "Hugging Face": []}
    print(f"# {args.family}: {machine()}; {args.steps} steps of {args.batch_size} x {args.sequence_length}, "
          f"AdamW peak {args.learning_rate:g}, 10% warm-up, linear decay, clip {CLIP}; "
          f"held out {args.heldout_batches} batches; tfbert jit_compile={args.jit_compile}", flush=True)
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        batches = training_batches(seed)
        tf_model = tfbert_model(config, args.family, seed)
        reference = Reference(tf_model, args.family, seed)
        losses = step0_check(tf_model, reference, batches[0], args.family)
        print(f"seed {seed}: step-0 loss " + ", ".join(f"{name} {value:.6f}" for name, value in losses.items()),
              flush=True)
        worst = max(abs(value - losses["Hugging Face"]) for value in losses.values())
        if worst > 1e-4 * max(1.0, abs(losses["Hugging Face"])):
            raise SystemExit(f"step-0 losses differ by {worst:.2e}: the weight copy or a forward pass is wrong")
        for name, run in (("tfbert", lambda clock: run_tfbert(tf_model, batches, heldout, args.family, args, clock)),
                          ("Hugging Face",
                           lambda clock: run_reference(reference, batches, heldout, args.family, args, clock))):
            start, clock = time.perf_counter(), CpuClock()
            curves[name].append(run(clock))
            curve = {step: {metric: round(value, 4) for metric, value in scores.items()}
                     for step, scores in curves[name][-1].items()}
            print(f"seed {seed} {name}: {curve} in {time.perf_counter() - start:.0f} s; "
                  f"{clock.summary(min(args.eval_every, args.steps // 2))}", flush=True)
            if args.record:
                record(args.record, args, seed, name, curves[name][-1])
    print_table(recorded_curves(args.record, args) if args.record else curves, family.metrics)


if __name__ == "__main__":
    main()
