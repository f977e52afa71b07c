"""Does pretraining learn on real text? Tiny ALBERT (MLM + SOP) and tiny RoBERTa (MLM) on the CPU.

    python benchmarks/learning_pretraining.py                      # the bundled corpus, each config's recipe
    python benchmarks/learning_pretraining.py --corpus a.txt b.txt --steps 800
    python benchmarks/learning_pretraining.py --configs albert_tiny --optimizer albert --learning-rate 1e-3

The corpus (a sentence a line, blank lines between documents) is split by
document: 90% to train a vocabulary and pretrain through `tfbert pretrain`'s
Python API, 10% held out (every 10th document, from the first). The table gives
the MLM loss of the first 20 training steps, the held-out MLM loss and accuracy
after training (over every held-out document, once), the reduction, and ALBERT's
held-out sentence-order accuracy, and the held-out MLM loss again with each sequence's unmasked
tokens shuffled among their positions ("context shuffled"): a model that reads word order loses
accuracy there, a bag-of-words model (one that uses only which tokens are around) does not;
"minutes" is the wall time of training, "CPU minutes"
the CPU time of the whole process meanwhile (all threads; a steadier figure on a shared machine,
and on 2 quiet cores the wall time lies between half of it and all of it). Optimizer, learning rate and warm-up default to
the config's `pretraining` recipe (`tfbert.training.pretraining_config.optimizer_settings`).
"""

from __future__ import annotations



import argparse
import gzip
import os
import platform
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from tfbert.config import load_config  # noqa: E402
from tfbert.corpus import write_held_out_split  # noqa: E402
from tfbert.text.vocab_training import train_byte_bpe, train_sentencepiece  # noqa: E402
from tfbert.training.pretraining import pretrain  # noqa: E402
from tfbert.training.pretraining_config import optimizer_settings  # noqa: E402
from tfbert.training.pretraining_inputs import documents_from, pretraining_examples  # noqa: E402


def read_documents(paths: list[str]) -> list[str]:
    text = "\n\n".join(
        (gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")).read()
        for path in paths
    )
    return [block.strip() for block in text.split("\n\n") if block.strip()]


def split_corpus(paths: list[str], folder: Path) -> tuple[Path, Path]:
    return write_held_out_split([document.split("\n") for document in read_documents(paths)], folder)


class FirstSteps(keras.callbacks.Callback):
    """MLM loss over the first steps (Keras logs a running mean within the first epoch)."""

    def __init__(self, steps: int):
        super().__init__()
        self.steps, self.values = steps, []

    def on_train_batch_end(self, batch, logs=None):
        if len(self.values) < self.steps:
            self.values.append(float(logs["mlm_loss"]))


def shuffle_context(dataset: tf.data.Dataset, special_ids: tuple[int, ...], seed: int = 0) -> tf.data.Dataset:
    """`dataset` with each sequence's unmasked real tokens permuted among their positions.

    Special tokens, padding and the masked positions stay where they are, so the bag of
    context tokens is the same and only their order is lost.
    """
    rng = np.random.default_rng(seed)

    def shuffled_batches():
        for inputs, labels in dataset.as_numpy_iterator():
            token_ids = inputs["token_ids"].copy()
            context = (inputs["padding_mask"] > 0) & ~np.isin(token_ids, special_ids)
            for row, (positions, weights) in enumerate(zip(inputs["masked_positions"], labels["masked_weights"])):
                movable = context[row]
                movable[positions[weights > 0]] = False
                where = np.flatnonzero(movable)
                token_ids[row, where] = token_ids[row, rng.permutation(where)]
            yield {**inputs, "token_ids": token_ids}, labels

    return tf.data.Dataset.from_generator(shuffled_batches, output_signature=dataset.element_spec)


def run(name: str, config_name: str, args: argparse.Namespace, train: Path, held_out: Path, folder: Path) -> dict:
    config = load_config(config_name)
    if config.architecture == "albert":
        tokenizer = train_sentencepiece(str(train), args.vocab_size, folder / f"{name}_vocab", lowercase=True)
    else:
        tokenizer = train_byte_bpe(str(train), args.vocab_size, folder / f"{name}_vocab")
    first = FirstSteps(20)
    start, cpu_start = time.perf_counter(), time.process_time()
    if args.dropout is not None:
        config = config.replace(encoder=config.encoder.replace(dropout_rate=args.dropout,
                                                               attention_dropout_rate=args.dropout))
    max_predictions = args.max_predictions or max(args.sequence_length * 3 // 20, 2)
    recipe = optimizer_settings(config, args.steps, args.optimizer, args.learning_rate, args.warmup_steps)
    model = pretrain(config, tokenizer=tokenizer, data=[str(train)], model_dir=str(folder / name), steps=args.steps,
                     global_batch_size=args.batch_size, strategy="cpu", sequence_length=args.sequence_length,
                     max_predictions=max_predictions, optimizer_recipe=recipe[0], learning_rate=recipe[1],
                     warmup_steps=recipe[2], checkpoint_every=args.steps, seed=0, verbose=0,
                     shuffle_buffer=args.shuffle_buffer, callbacks=[first])
    minutes, cpu_minutes = (time.perf_counter() - start) / 60, (time.process_time() - cpu_start) / 60
    held_out_batches = pretraining_examples(model.config, tokenizer, documents_from(str(held_out)),
                                            batch_size=args.batch_size, sequence_length=args.sequence_length,
                                            max_predictions=max_predictions, seed=1)
    if args.eval_batches:
        held_out_batches = held_out_batches.take(args.eval_batches)
    held_out_batches = held_out_batches.cache()
    scores = model.evaluate(held_out_batches, return_dict=True, verbose=0)
    special_ids = (tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)
    shuffled = model.evaluate(shuffle_context(held_out_batches, special_ids), return_dict=True, verbose=0)
    return {"start": first.values[-1], "minutes": minutes, "cpu_minutes": cpu_minutes, "recipe": recipe,
            "shuffled_mlm_loss": shuffled["mlm_loss"], **scores}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", help="text files; default: the corpus bundled with tfbert")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--vocab-size", type=int, default=4000)
    parser.add_argument("--max-predictions", type=int, help="default: 15%% of the sequence length")
    parser.add_argument("--optimizer", help="optimizer recipe (default: the config's pretraining recipe)")
    parser.add_argument("--learning-rate", type=float, help="peak rate (default: the config's recipe)")
    parser.add_argument("--warmup-steps", type=int, help="default: the config's recipe")
    parser.add_argument("--dropout", type=float, help="hidden and attention dropout (default: the config's)")
    parser.add_argument("--shuffle-buffer", type=int, default=1000, help="0: documents and examples in corpus order")
    parser.add_argument("--eval-batches", type=int, default=0, help="held-out batches (default 0: all)")
    parser.add_argument("--configs", nargs="+", default=["albert_tiny", "roberta_tiny"])
    args = parser.parse_args()
    if not args.corpus:
        from tfbert.corpus import path as bundled_corpus

        args.corpus = [str(bundled_corpus())]

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        train, held_out = split_corpus(args.corpus, folder)
        print(f"# {platform.machine()}, {os.cpu_count()} cores; corpus {', '.join(Path(p).name for p in args.corpus)}; "
              f"{args.steps} steps of {args.batch_size} x {args.sequence_length}, vocabulary {args.vocab_size}, "
              f"shuffle buffer {args.shuffle_buffer}")
        print("| model | optimizer, peak rate, warm-up | MLM loss, first 20 steps | held-out MLM loss | reduction "
              "| held-out MLM acc | held-out SOP acc | held-out MLM loss, context shuffled | minutes | CPU minutes |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for config_name in args.configs:
            name = config_name.split("_")[0]
            result = run(name, config_name, args, train, held_out, folder)
            reduction = 1 - result["mlm_loss"] / result["start"]
            sop = f"{result['sop_accuracy']:.3f}" if "sop_accuracy" in result else "—"
            optimizer, rate, warmup = result["recipe"]
            recipe = f"{optimizer}, {rate if rate is not None else 'recipe'}, {warmup if warmup is not None else 'recipe'}"
            print(f"| {config_name} | {recipe} | {result['start']:.3f} | {result['mlm_loss']:.3f} | {reduction:.0%} | "
                  f"{result['mlm_accuracy']:.3f} | {sop} | {result['shuffled_mlm_loss']:.3f} | "
                  f"{result['minutes']:.1f} | {result['cpu_minutes']:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
