"""Every `>>>` example in tfbert's docstrings runs and prints what it shows, module by module.

Each module's examples run in a temporary working folder that holds, under the names the examples use, the real
test assets (`EXAMPLE_FILES`: `vocab.txt`, a SentencePiece model, GPT-2's BPE, the `all-MiniLM-L6-v2/` folder, a
corpus) and what tfbert's commands make of them (`EXAMPLE_RUNS`: a two-step `bert_tiny` pretraining run, a
classifier fine-tuned from it, their SavedModels and the classifier's TF Lite export), built once per test session
on tiny settings (sequence length 16) and linked into each folder. Examples that need what a test machine lacks (a
server, a GPU, the network, minutes of training, a full-size checkpoint) carry `# doctest: +SKIP`; everything else runs here.
"""

import doctest
import importlib
import shutil
from pathlib import Path

import pytest
from assets import asset
from built_once import built_once

pytestmark = pytest.mark.end_to_end

PACKAGE = Path(__file__).resolve().parents[2] / "tfbert"
# tests/test_public_api.py runs these two with the public API's other checks.
ELSEWHERE = {"tfbert", "tfbert.architectures.registry"}
# Names the examples use -> test assets (tests/assets.py), linked into each module's working folder.
EXAMPLE_FILES = {
    "vocab.txt": "minilm/vocab.txt",   # BERT's uncased WordPiece vocabulary
    "botchan_en_unigram_1000.model": "spm/botchan_en_unigram_1000.model",
    "all-MiniLM-L6-v2": "minilm",      # a Hugging Face folder: config.json, model.safetensors, tokenizer files
    "gpt2.tiktoken": "bpe/gpt2.tiktoken",
    "botchan.txt": "text/botchan.txt",  # an English novel, a sentence or two per line
    "ztext": "sword/modules/texts/ztext",  # SWORD Bible modules: engKJV2006eb, spaRV1909eb, engWEB2015eb
}
# The commands that make `EXAMPLE_RUNS`, in order, run in one folder; `train.tsv` is written first.
RUN_COMMANDS = (
    ["pretrain", "--config", "bert_tiny", "--tokenizer", "vocab/", "--data", "botchan.txt", "--model-dir",
     "runs/bert", "--steps", "2", "--batch-size", "2", "--sequence-length", "16", "--max-predictions", "2", "--seed", "0"],
    ["finetune", "--pretrained", "runs/bert", "--model-dir", "runs/sst2", "--train", "train.tsv", "--eval",
     "train.tsv", "--label-names", "negative", "positive", "--epochs", "1", "--batch-size", "2", "--max-length",
     "16", "--precision", "fp32", "--seed", "0"],
    ["export", "runs/sst2", "--name", "sst2"],
    ["export", "runs/bert", "--name", "fill_mask"],
    ["export", "runs/sst2", "--name", "sst2", "--output-dir", "tflite", "--format", "tflite"],
)
PARALLEL_VERSES = 64  # kjv.en / rv.es / kjv-rv.tsv: the first verses of Genesis in English and Spanish
CORPUS_LINES = 200  # corpus.txt: the first lines of botchan.txt, for examples that train on a corpus
# (score 0-5, sentence1, sentence2): written as KorSTS and silver files
STS_ROWS = (
    (4.8, "한 남자가 기타를 치고 있다.", "남자가 기타를 연주하고 있다."),
    (3.8, "한 여자가 요리를 하고 있다.", "여자가 음식을 만들고 있다."),
    (0.0, "고양이가 잠을 자고 있다.", "차가 도로를 달리고 있다."),
    (2.5, "아이들이 공원에서 놀고 있다.", "아이들이 밖에 있다."),
    (0.3, "비가 내리고 있다.", "한 남자가 피아노를 친다."),
    (4.0, "개가 공을 쫓고 있다.", "강아지가 공을 따라 달린다."),
)
NLI_ROWS = (
    ("한 남자가 기타를 치고 있다.", "남자가 음악을 연주한다.", "entailment"),
    ("한 남자가 기타를 치고 있다.", "남자가 잠을 자고 있다.", "contradiction"),
    ("한 여자가 요리를 하고 있다.", "여자가 저녁을 만든다.", "neutral"),
    ("아이들이 공원에서 놀고 있다.", "아이들이 밖에 있다.", "entailment"),
)
SST2_LINES = ("a gripping film\t1", "dull and slow\t0", "a joy to watch\t1", "a waste of time\t0")
# Names the examples use -> what `RUN_COMMANDS` made (or the linked assets), linked into each working folder.
EXAMPLE_RUNS = {
    "runs/bert": "runs/bert",          # `tfbert pretrain`: checkpoints, encoder/, tokenizer/, config.yaml
    "runs/sst2": "runs/sst2",          # `tfbert finetune`: best.keras, tokenizer/, task.json (negative, positive)
    "saved_models/sst2": "saved_models/sst2",            # `tfbert export runs/sst2`: version 1
    "saved_models/fill_mask": "saved_models/fill_mask",  # `tfbert export runs/bert`: version 1
    "tflite/sst2": "tflite/sst2",      # `tfbert export runs/sst2 --format tflite`: model.tflite, tokenizer/
    "vocab": "runs/bert/tokenizer",    # a tokenizer folder (vocab.txt)
    "train.tsv": "train.tsv",          # sentence<TAB>label with a header, four lines
    "corpus.txt": "corpus.txt",        # the first 200 lines of botchan.txt
    "kjv.en": "kjv.en",                # a verse a line, aligned with rv.es
    "rv.es": "rv.es",
    "kjv-rv.tsv": "kjv-rv.tsv",        # the same verses as English<TAB>Spanish
    "latin1.txt": "latin1.txt",        # three lines, the third with a Latin-1 byte
    "KorSTS": "KorSTS",                # sts-train.tsv, sts-dev.tsv: `STS_ROWS` in KorSTS' format
    "KorNLI": "KorNLI",                # snli_1.0_train.ko.tsv: `NLI_ROWS` in KorNLI's format
    "klue-sts-v1.1_dev.json": "klue-sts-v1.1_dev.json",  # `STS_ROWS` in KLUE's format
    "klue-nli-v1.1_dev.json": "klue-nli-v1.1_dev.json",  # `NLI_ROWS` in KLUE's format
    "silver.tsv": "silver.tsv",        # `STS_ROWS` as sentence1<TAB>sentence2<TAB>score, no header
    "dev.jsonl": "dev.jsonl",          # one SQuAD question in the TFDS schema
    "corpus-0.tfrecord": "corpus-0.tfrecord",  # corpus.txt's lines as one raw document string
}


def build_example_runs(folder: Path) -> str:
    """Runs `RUN_COMMANDS` in `folder` (in this process, as `tfbert ...` would); returns the folder."""
    import keras

    from tfbert.cli import main

    (folder / "vocab").mkdir()
    (folder / "vocab" / "vocab.txt").symlink_to(asset("minilm/vocab.txt"))
    (folder / "botchan.txt").symlink_to(asset("text/botchan.txt"))
    lines = Path(asset("text/botchan.txt")).read_text(encoding="utf-8").splitlines()
    (folder / "corpus.txt").write_text("\n".join(lines[:CORPUS_LINES]) + "\n", encoding="utf-8")
    write_parallel_files(folder)
    write_pair_files(folder)
    write_question_and_records(folder)
    (folder / "latin1.txt").write_bytes(b"a first line\nthe second\ncaf\xe9 au lait\n")
    (folder / "train.tsv").write_text("sentence\tlabel\n" + "\n".join(SST2_LINES) + "\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for command in RUN_COMMANDS:
            assert main(command) == 0, command
    keras.mixed_precision.set_global_policy("float32")
    return str(folder)


def write_pair_files(folder: Path) -> None:
    import json

    def write(name: str, lines) -> None:
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")

    korsts = ["genre\tfilename\tyear\tid\tscore\tsentence1\tsentence2"] + [
        f"main-captions\tMSRvid\t2012test\t{index:04d}\t{score}\t{first}\t{second}"
        for index, (score, first, second) in enumerate(STS_ROWS)]
    write("KorSTS/sts-train.tsv", korsts)
    write("KorSTS/sts-dev.tsv", korsts)
    write("KorNLI/snli_1.0_train.ko.tsv",
          ["sentence1\tsentence2\tgold_label"] + ["\t".join(row) for row in NLI_ROWS])
    write("silver.tsv", [f"{first}\t{second}\t{score}" for score, first, second in STS_ROWS])
    write("klue-sts-v1.1_dev.json", [json.dumps([
        {"guid": f"klue-sts-v1_dev_{index:05d}", "sentence1": first, "sentence2": second,
         "labels": {"label": score, "real-label": score, "binary-label": int(score >= 3)}}
        for index, (score, first, second) in enumerate(STS_ROWS)], ensure_ascii=False)])
    write("klue-nli-v1.1_dev.json", [json.dumps([
        {"guid": f"klue-nli-v1_dev_{index:05d}", "premise": premise, "hypothesis": hypothesis,
         "gold_label": label} for index, (premise, hypothesis, label) in enumerate(NLI_ROWS)], ensure_ascii=False)])


def write_question_and_records(folder: Path) -> None:
    import json

    import tensorflow as tf

    context = "Botchan was written by Natsume Soseki in 1906."
    question = {"id": "q1", "question": "Who wrote Botchan?", "context": context,
                "answers": {"text": ["Natsume Soseki"], "answer_start": [context.index("Natsume")]}}
    (folder / "dev.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")
    with tf.io.TFRecordWriter(str(folder / "corpus-0.tfrecord")) as writer:
        writer.write((folder / "corpus.txt").read_bytes())


def write_parallel_files(folder: Path) -> None:
    from itertools import islice

    from tfbert.data.sword import ZTextModule, aligned_verses, write_parallel

    modules = [ZTextModule(asset(f"sword/modules/texts/ztext/{name}")) for name in ("engKJV2006eb", "spaRV1909eb")]
    write_parallel(islice(aligned_verses(*modules), PARALLEL_VERSES), folder / "kjv.en", folder / "rv.es")
    english, spanish = ((folder / name).read_text(encoding="utf-8").splitlines() for name in ("kjv.en", "rv.es"))
    (folder / "kjv-rv.tsv").write_text("".join(f"{en}\t{es}\n" for en, es in zip(english, spanish)), encoding="utf-8")


@pytest.fixture(scope="session")
def example_runs(tmp_path_factory) -> Path:
    return Path(built_once(tmp_path_factory, "docstring-runs", build_example_runs))


def module_names() -> list[str]:
    """Every module of the package that holds a `>>>` line, found without importing anything."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return [name for name in names if name not in ELSEWHERE]


@pytest.mark.parametrize("name", module_names())
def test_docstring_examples_run(name, tmp_path, monkeypatch, example_runs):
    for file_name, source in EXAMPLE_FILES.items():
        (tmp_path / file_name).symlink_to(asset(source))
    for file_name, source in EXAMPLE_RUNS.items():   # files copied (examples may rewrite them), folders linked
        (tmp_path / file_name).parent.mkdir(exist_ok=True)
        if (example_runs / source).is_file():
            shutil.copyfile(example_runs / source, tmp_path / file_name)
        else:
            (tmp_path / file_name).symlink_to(example_runs / source)
    monkeypatch.chdir(tmp_path)  # examples that write files (tfbert.corpus's split) write them here
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=report.append)
    assert not runner.failures, "".join(report)
