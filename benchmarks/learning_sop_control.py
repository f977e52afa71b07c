"""Control for the tiny ALBERT's sentence-order accuracy: how fast does an encoder that already
reads English learn sentence-order prediction on the same Bible pairs?

all-MiniLM-L6-v2 (L=6, H=384, the test asset: `python tests/assets.py`) with a sentence-order
head on its pooled output is trained on SOP alone, with its own uncased WordPiece vocabulary, on
the pairs `pretraining_dataset(objective="sop")` makes from the bundled World English Bible
(9/10 of the chapters, examples shuffled), and scored on every pair of the held-out chapters
(the other 1/10), before and after. `pretraining_dataset` masks every batch; here at most 2
tokens of a sequence (`max_predictions=2`), far fewer than the 15% the tiny ALBERT reads.
`--scratch` trains the same model from a random initialisation. `--hidden` and `--vocab-size`
do not apply (the model is MiniLM's size, with its vocabulary).

    python benchmarks/learning_sop_control.py [--steps 600] [--learning-rate 1e-4] [--scratch]
"""

from __future__ import annotations

import time
from pathlib import Path


from learning_common import BibleRun, bible_arguments, table  # noqa: E402

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from assets import asset  # noqa: E402
from tfbert.convert.huggingface import load_huggingface  # noqa: E402
from tfbert.data import MaskedLMMasker, SegmentPacker, pretraining_dataset  # noqa: E402
from tfbert.models.encoder import Encoder  # noqa: E402
from tfbert.models.heads import SentencePairHead  # noqa: E402
from tfbert.text import WordPieceTokenizer  # noqa: E402
from tfbert.training.optimization import create_optimizer  # noqa: E402
from tfbert.training.pretraining_inputs import documents_from  # noqa: E402

INPUTS = ("token_ids", "segment_ids", "padding_mask")


def control_arguments(parser) -> None:
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--scratch", action="store_true", help="random initial weights instead of MiniLM's")


def sop_pairs(run: BibleRun, path: Path, *, seed: int, training: bool) -> tf.data.Dataset:
    """`(inputs, sentence_order_labels)` batches of the chapters in `path` (repeated and shuffled when training)."""
    tokenizer, args = run.tokenizer, run.args
    packer = SegmentPacker(args.sequence_length, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id, style="bert")
    documents = documents_from(str(path))
    batches = pretraining_dataset(documents.repeat() if training else documents, tokenizer.tokenize,
                                  objective="sop", packer=packer,
                                  masker=MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=2),
                                  batch_size=args.batch_size, seed=seed, shuffle_buffer=1000 if training else 0)
    return batches.map(lambda batch: ({name: batch[name] for name in INPUTS}, batch["sentence_order_labels"]))


def main() -> None:
    args = bible_arguments(steps=600, add_arguments=control_arguments)
    run = BibleRun(args, tokenizer=WordPieceTokenizer(asset("minilm/vocab.txt")))
    encoder = load_huggingface(asset("minilm"))
    if args.scratch:
        encoder = Encoder(encoder.config, name="encoder")
    inputs = {name: keras.Input((None,), dtype="int32", name=name) for name in INPUTS}
    model = keras.Model(inputs, SentencePairHead(dropout_rate=0.1, name="sop_head")(encoder(inputs)["pooled_output"]))
    model.compile(optimizer=create_optimizer("bert", args.steps, learning_rate=args.learning_rate,
                                             warmup_steps=args.steps // 10),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"],
                  jit_compile=True)
    heldout = sop_pairs(run, run.heldout_file, seed=1, training=False).cache()
    batches = sum(1 for _ in heldout)
    # A known cardinality: see learning_common.frozen.
    heldout = heldout.apply(tf.data.experimental.assert_cardinality(batches))
    before = model.evaluate(heldout, verbose=0, return_dict=True)
    start = time.time()
    history = model.fit(sop_pairs(run, run.train_file, seed=0, training=True), steps_per_epoch=args.steps,
                        epochs=1, verbose=0)
    seconds = time.time() - start
    after = model.evaluate(heldout, verbose=0, return_dict=True)

    name = "MiniLM-L6, random init" if args.scratch else "MiniLM-L6, pretrained"
    print(run.header(f"Sentence-order prediction alone on held-out WEB chapters ({batches * args.batch_size} "
                     f"pairs; lr {args.learning_rate:g})", seconds))
    print(table([(name, f"{before['accuracy']:.3f}", f"{history.history['accuracy'][-1]:.3f}",
                  f"{after['accuracy']:.3f}", f"{after['loss']:.3f}")],
                ("model", "held-out SOP acc, step 0", "training SOP acc (mean over the run)",
                 f"held-out SOP acc, step {args.steps}", "held-out SOP loss")))


if __name__ == "__main__":
    main()
