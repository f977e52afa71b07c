"""`tfbert quickstart`: a vocabulary, a pretrained tiny ALBERT, a SavedModel and fill-mask, on the CPU.

    tfbert quickstart                                  # about 4 minutes of CPU time on 2 cores
    tfbert quickstart --steps 2000                     # a longer run (a better model)
    tfbert quickstart --output-dir saved_models/quickstart --work-dir quickstart_run

Five steps, on the corpus bundled with tfbert (`tfbert.corpus`, the World English Bible, a chapter
per document; every 10th chapter is held out):

1. a SentencePiece vocabulary (`QUICKSTART.vocab_size` pieces) trained on the training chapters;
2. `albert_tiny` pretrained with MLM + SOP through `tfbert.training.pretraining.pretrain`, with
   the config's `pretraining` recipe (AdamW at 1e-3, 10% warm-up, no dropout; see
   benchmarks/RESULTS.md) on sequences of 64 tokens, with a progress bar;
3. masked-LM and sentence-order accuracy on the held-out chapters;
4. a SavedModel taking raw strings (tokenization in the graph) for fill-mask, written to
   `OUTPUT_DIR/VERSION/` in TF Serving's layout (a rerun adds the next version);
5. the exported model loaded back and asked to fill the masks of a few sentences.

Everything but the SavedModel goes to the work folder (default `quickstart_run/`): the corpus split
(`data/`), the vocabulary (`vocab/`) and the pretraining run (`pretrain/`: checkpoints, TensorBoard
logs, `encoder/`). A rerun starts again from scratch in the same folder.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import time
import warnings
from pathlib import Path
from typing import Callable

from tfbert.commands import add_command, add_overwrite_argument, flag_types
from tfbert.commands.errors import CommandError
from tfbert.commands.tensorflow_logs import import_tensorflow_quietly
from tfbert.export.client import predict_texts
from tfbert.outputs import QUICKSTART_MARKER, run_folder
from tfbert.training.settings import TrainingSettings

# TensorFlow is imported inside the functions, so `tfbert --help` stays instant.

WORK_MARKER = QUICKSTART_MARKER


@dataclasses.dataclass(frozen=True)
class QuickstartSettings:
    """What the quickstart trains; the defaults fit 5 minutes on 2 idle CPU cores of an AVX2 / AVX-512 machine
    without bfloat16: 500 steps, after which held-out masked-LM and sentence-order accuracy are well above chance
    (benchmarks/results/quickstart-timing.md has the times and accuracies)."""

    config: str = "albert_tiny"
    vocab_size: int = 4000
    steps: int = 500
    batch_size: int = 32
    sequence_length: int = 64
    held_out_every: int = 10
    seed: int = 0


QUICKSTART = QuickstartSettings()

# Sentences in the style of the corpus, with the word the text has at the mask: a slot that the
# context decides among frequent words, then content words that take far longer training.
FILL_MASK_SENTENCES = (
    ("In the beginning, God created the heavens {mask} the earth.", "and"),
    ("Speak to the children {mask} Israel.", "of"),
    ("In the beginning, God created the {mask} and the earth.", "heavens"),
    ("Yahweh is my {mask}; I shall lack nothing.", "shepherd"),
)


def prepare_work_dir(work_dir: Path) -> None:
    """Empties a work folder that an earlier quickstart made (`tfbert.outputs.run_folder` has claimed it)."""
    for entry in work_dir.iterdir():
        shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


def quickstart(
    output_dir: str | Path = "saved_models/quickstart",
    work_dir: str | Path = "quickstart_run",
    *,
    settings: QuickstartSettings = QUICKSTART,
    print_fn: Callable[[str], None] = print,
    verbose: str | int = "auto",
    overwrite: bool = False,
) -> dict:
    """Runs the five steps (see the module notes) and returns what it printed, as numbers.

    `work_dir` must be new, empty or an earlier quickstart's (emptied first); `overwrite` replaces
    any other folder. Returns a dict with `held_out` (the Keras metrics on the held-out chapters),
    `saved_model` (the version folder), `predictions` (sentence -> top tokens per mask) and
    `seconds` per step.
    """
    output_dir, work_dir = Path(output_dir), Path(work_dir)
    with run_folder(work_dir, "quickstart", flag="--work-dir", overwrite=overwrite):
        prepare_work_dir(work_dir)
        (work_dir / WORK_MARKER).write_text(json.dumps(dataclasses.asdict(settings), indent=2) + "\n",
                                            encoding="utf-8")
        return _five_steps(output_dir, work_dir, settings, print_fn, verbose)


def _five_steps(output_dir: Path, work_dir: Path, settings: QuickstartSettings, print_fn: Callable[[str], None],
                verbose: str | int) -> dict:
    seconds: dict[str, float] = {}
    clock, cpu_start = time.perf_counter(), time.process_time()

    def lap(name: str) -> float:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = now - clock
        clock = now
        return seconds[name]

    # Deferred (start-up): `tfbert.corpus` imports TensorFlow, kept out of `tfbert --help`
    import tensorflow as tf

    import tfbert.corpus
    from tfbert.config import load_config
    from tfbert.export.saved_model import export_saved_model
    from tfbert.models.parameters import count_encoder_parameters
    from tfbert.text.vocab_training import train_sentencepiece
    from tfbert.training.pretraining import pretrain
    from tfbert.training.pretraining_config import config_for_tokenizer
    from tfbert.training.pretraining_inputs import documents_from, pretraining_examples

    train_path, held_out_path = tfbert.corpus.write_held_out_split(tfbert.corpus.chapters(), work_dir / "data",
                                                                   every=settings.held_out_every)
    tokenizer = train_sentencepiece(str(train_path), settings.vocab_size, work_dir / "vocab", lowercase=True)
    print_fn(f"[1/5] vocabulary: SentencePiece, {tokenizer.vocabulary_size():,} pieces, trained on "
             f"{_count_documents(train_path):,} chapters of the bundled World English Bible "
             f"({_count_documents(held_out_path):,} held out) in {lap('vocabulary'):.0f} s -> {work_dir / 'vocab'}")

    config = config_for_tokenizer(load_config(settings.config), tokenizer)
    encoder = config.encoder
    print_fn(f"[2/5] pretraining {settings.config} (L={encoder.num_layers}, H={encoder.hidden_size}, "
             f"E={encoder.embedding_size}, {count_encoder_parameters(encoder):,} parameters) with MLM + SOP: "
             f"{settings.steps} steps of {settings.batch_size} x {settings.sequence_length} tokens on the CPU")
    max_predictions = max_predictions_for(settings.sequence_length)
    training = TrainingSettings(steps=settings.steps, batch_size=settings.batch_size, strategy="cpu",
                                checkpoint_every=settings.steps, seed=settings.seed, verbose=verbose)
    model = pretrain(config, tokenizer=tokenizer, data=[str(train_path)], model_dir=str(work_dir / "pretrain"),
                     settings=training, sequence_length=settings.sequence_length, max_predictions=max_predictions)
    print_fn(f"      trained in {lap('pretraining') / 60:.1f} min -> {work_dir / 'pretrain'}")

    held_out = pretraining_examples(model.config, tokenizer, documents_from(str(held_out_path)),
                                    batch_size=settings.batch_size, sequence_length=settings.sequence_length,
                                    max_predictions=max_predictions, seed=settings.seed + 1)
    with warnings.catch_warnings():
        # One pass over the finite held-out set; Keras warns when a dataset of unknown length ends.
        warnings.filterwarnings("ignore", message="Your input ran out of data")
        scores = {name: float(value) for name, value in model.evaluate(held_out, verbose=0, return_dict=True).items()}
    chance_loss = float(tf.math.log(float(tokenizer.vocabulary_size())))
    print_fn(f"[3/5] held-out chapters: masked-LM accuracy {scores['mlm_accuracy']:.3f}, loss "
             f"{scores['mlm_loss']:.2f} (a uniform guess: {chance_loss:.2f}); sentence-order accuracy "
             f"{scores['sop_accuracy']:.3f} (chance: 0.5) [{lap('evaluation'):.0f} s]")

    path = export_saved_model(model, output_dir.name, tokenizer=tokenizer, output_dir=output_dir.parent or ".",
                              sequence_length=settings.sequence_length)
    print_fn(f"[4/5] SavedModel (fill-mask, raw strings in) -> {path} [{lap('export'):.0f} s]")

    sentences = [sentence.format(mask=tokenizer.special_tokens["mask"]) for sentence, _ in FILL_MASK_SENTENCES]
    records = predict_texts(path, sentences, top_k=5)
    predictions = {}
    print_fn(f"[5/5] fill-mask with the exported model (tf.saved_model.load('{path}')), top 5 per mask:")
    for sentence, record, (_, word) in zip(sentences, records, FILL_MASK_SENTENCES):
        predictions[sentence] = [(_readable(guess["token"]), guess["score"])
                                 for guess in record["masks"][0]["predictions"]]
        guesses = ", ".join(f"[{token}] {probability:.2f}" if token == word else f"{token} {probability:.2f}"
                            for token, probability in predictions[sentence])
        print_fn(f"      {sentence}\n        -> {guesses}   (the text: {word})")
    lap("fill_mask")
    print_fn("      Minutes of training teach the frequent words and where they go; content words such as "
             "'heavens' take a longer run:\n"
             f"      tfbert pretrain --config {settings.config} --tokenizer {work_dir / 'vocab'} --data {train_path} "
             f"--sequence-length {settings.sequence_length} --max-predictions {max_predictions} --steps 20000 "
             f"--model-dir runs/{settings.config}")
    total = sum(seconds.values())
    seconds["cpu"] = time.process_time() - cpu_start
    print_fn(f"done in {total / 60:.1f} min ({seconds['cpu'] / 60:.1f} min of CPU time). Serve the export: "
             f"docker run -p 8501:8501 -v $PWD/{output_dir}:/models/{output_dir.name} "
             f"-e MODEL_NAME={output_dir.name} tensorflow/serving:{tf.__version__}")
    return {"held_out": scores, "saved_model": path, "predictions": predictions, "seconds": seconds}


def _readable(text: str) -> str:
    """A SentencePiece piece without its word-start mark ("▁the" -> "the")."""
    return text[1:] if text.startswith("\u2581") and len(text) > 1 else text


def max_predictions_for(sequence_length: int) -> int:
    """Prediction slots for 15% masking: the expected count plus room for ALBERT's n-grams (19 for 128)."""
    return max(sequence_length * 3 // 20, 2)


def _count_documents(path: Path) -> int:
    return sum(1 for block in path.read_text(encoding="utf-8").split("\n\n") if block.strip())


def run(args: argparse.Namespace) -> None:
    """`tfbert quickstart`: the five steps with the command line's settings."""
    import_tensorflow_quietly()

    settings = QUICKSTART if args.steps is None else dataclasses.replace(QUICKSTART, steps=args.steps)
    try:
        quickstart(args.output_dir, args.work_dir, settings=settings, overwrite=args.overwrite)
    except (FileNotFoundError, FileExistsError, ValueError) as error:
        raise CommandError(str(error)) from None


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `quickstart` subcommand to `tfbert`'s subparsers."""
    parser = add_command(
        commands, "quickstart",
        "train a vocabulary and a tiny ALBERT on the bundled corpus, export it, and fill masks (CPU, minutes)",
        __doc__.split("\n\n")[0] + " See docs/getting-started.md.",
        "\n".join(line.strip() for line in __doc__.splitlines() if line.strip().startswith("tfbert quickstart")))
    parser.add_argument("--output-dir", default="saved_models/quickstart",
                        help="the SavedModel goes to OUTPUT_DIR/VERSION/ (default saved_models/quickstart)")
    parser.add_argument("--work-dir", default="quickstart_run",
                        help="corpus split, vocabulary, checkpoints and logs (default quickstart_run; emptied "
                             "on a rerun)")
    parser.add_argument("--steps", type=flag_types.positive_int, help=f"pretraining steps (default {QUICKSTART.steps})")
    add_overwrite_argument(parser, "replace a --work-dir that an earlier quickstart did not make (one that it "
                                   "made is emptied and reused anyway)")
    parser.set_defaults(run=run)
    return parser
