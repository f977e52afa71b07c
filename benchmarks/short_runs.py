"""Where XLA pays on a CPU: `tfbert pretrain` with `--jit-compile on` and `off` at two run lengths.

`--jit-compile auto` compiles a CPU run only from `tfbert.training.settings.CPU_XLA_MIN_STEPS` steps on. This
script runs the command (fp32, batch 8 x 128 tokens, the test assets' MiniLM WordPiece vocabulary and Botchan) for
a short and a longer run with XLA on and off, and prints wall / CPU seconds of each run and the seconds per step
from the difference of the two lengths; the compile is the short run's extra time with XLA on.

    python benchmarks/short_runs.py [--configs bert_tiny,bert_small] [--steps 2,42]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the checkout: benchmarks.lab

from benchmarks.lab.assets import asset  # noqa: E402


def timed_run(config: str, steps: int, jit: str) -> tuple[float, float]:
    """Wall and CPU seconds of one `tfbert pretrain` process."""
    with tempfile.TemporaryDirectory() as folder:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(["tfbert", "pretrain", "--config", config, "--tokenizer", str(asset("minilm")),
                        "--data", str(asset("text/botchan.txt")), "--model-dir", f"{folder}/run",
                        "--steps", str(steps), "--batch-size", "8", "--sequence-length", "128", "--strategy", "cpu",
                        "--precision", "fp32", "--checkpoint-every", str(steps), "--seed", "0",
                        "--jit-compile", jit], check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="bert_tiny,bert_small")
    parser.add_argument("--steps", default="2,42", help="the short and the longer run's steps")
    args = parser.parse_args()
    short, long = (int(text) for text in args.steps.split(","))
    print(f"| config | XLA | {short} steps: wall / CPU s | {long} steps: wall / CPU s | s per step |")
    print("|---|---|---:|---:|---:|")
    for config in args.configs.split(","):
        for jit in ("on", "off"):
            (short_wall, short_cpu), (long_wall, long_cpu) = (timed_run(config, n, jit) for n in (short, long))
            print(f"| {config} | {jit} | {short_wall:.1f} / {short_cpu:.1f} | {long_wall:.1f} / {long_cpu:.1f} | "
                  f"{(long_wall - short_wall) / (long - short):.3f} |", flush=True)


if __name__ == "__main__":
    main()
