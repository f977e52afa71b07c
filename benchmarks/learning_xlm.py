"""Does a tiny XLM learn TLM on English–Spanish verse pairs on the CPU?

Reads the KJV (`sword-text-kjv`) and Reina-Valera 1909 (`sword-text-sparv`) SWORD modules
from the test assets (`python tests/assets.py`) with `tfbert.data.sword`, aligns them by verse
(31,084 pairs), holds out every 20th pair, trains a SentencePiece vocabulary on the training
side of both languages, and trains a tiny XLM (L=2, H=128, 2 languages) with
`XLMPretrainingModel(objective="mlm")` on TLM batches (`tfbert.families.xlm.streams.tlm_dataset`:
pair concatenated, positions restarting at the Spanish sentence, language ids per part, both
sides masked). Reports the held-out TLM loss (fixed masks) before and after.

    python benchmarks/learning_xlm.py [--steps 600]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


from learning_common import evaluate, frozen, machine, table  # noqa: E402

import keras  # noqa: E402

from assets import asset  # noqa: E402
from tiny_recipes import tiny_xlm  # noqa: E402
from tfbert.data import MaskedLMMasker  # noqa: E402
from tfbert.families.xlm.streams import split_xlm_batch, tlm_dataset  # noqa: E402
from tfbert.data.parallel import parallel_text_lines  # noqa: E402
from tfbert.data.sword import ZTextModule, aligned_verses  # noqa: E402
from tfbert.families.xlm.models import XLMPretrainingModel  # noqa: E402
from tfbert.text.vocab_training import train_sentencepiece  # noqa: E402
from tfbert.training.optimization import create_optimizer  # noqa: E402
from tfbert.training.pretraining_config import config_for_tokenizer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=96)
    parser.add_argument("--vocab-size", type=int, default=4000)
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    work = Path(tempfile.mkdtemp())
    modules = asset("sword/modules/texts/ztext")
    pairs = list(aligned_verses(ZTextModule(modules / "engKJV2006eb"), ZTextModule(modules / "spaRV1909eb")))
    files = {}
    for split, rows in (("train", [p for i, p in enumerate(pairs) if i % 20 != 19]),
                        ("heldout", [p for i, p in enumerate(pairs) if i % 20 == 19])):
        for column, language in ((1, "en"), (2, "es")):
            files[split, language] = work / f"{split}.{language}"
            files[split, language].write_text("".join(row[column] + "\n" for row in rows), encoding="utf-8")
    tokenizer = train_sentencepiece([str(files["train", "en"]), str(files["train", "es"])], args.vocab_size,
                                    work / "spm")
    config = config_for_tokenizer(tiny_xlm(hidden=128, layers=2, heads=2), tokenizer)
    masker = MaskedLMMasker.for_tokenizer(tokenizer, max_predictions=24)

    def examples(split, seed, shuffle):
        data = parallel_text_lines(files[split, "en"], files[split, "es"]).repeat()
        batches = tlm_dataset(data, tokenizer, masker=masker, sequence_length=args.sequence_length,
                              batch_size=args.batch_size, seed=seed, shuffle_buffer=10_000 if shuffle else None)
        return batches.map(split_xlm_batch)

    heldout = frozen(examples("heldout", 1, False), 40)
    model = XLMPretrainingModel(config, objective="mlm")
    model.compile(optimizer=create_optimizer("bert", args.steps, learning_rate=1e-3, warmup_steps=args.steps // 10),
                  jit_compile=False)
    before = evaluate(model, heldout)
    start = time.time()
    model.fit(examples("train", 0, True), steps_per_epoch=args.steps, epochs=1, verbose=0)
    seconds = time.time() - start
    after = evaluate(model, heldout)
    rows = [(name, f"{before[name]:.3f}", f"{after[name]:.3f}", f"{100 * (after[name] - before[name]) / before[name]:+.1f}%")
            for name in ("mlm_loss", "mlm_accuracy")]
    print(f"XLM TLM on held-out KJV / Reina-Valera verse pairs ({machine()})")
    print(f"{len(pairs):,} aligned verses; vocabulary {tokenizer.vocabulary_size()}, "
          f"batch {args.batch_size} x {args.sequence_length}, {args.steps} steps in {seconds:.0f} s")
    print(table(rows, ("TLM metric", "step 0", f"step {args.steps}", "change")))
    ok = after["mlm_loss"] <= 0.7 * before["mlm_loss"]
    print("PASS" if ok else "FAIL", "(TLM loss down by at least 30%)")


if __name__ == "__main__":
    main()
