"""Masked-LM pretraining steps/s of tfbert's models, Keras' JAX backend against its TensorFlow backend, one run.

    python benchmarks/jax_vs_tensorflow.py                        # bert_small, albert_base; batch 8 x 128, CPU
    python benchmarks/jax_vs_tensorflow.py --rounds 3 --steps 12
    python benchmarks/jax_vs_tensorflow.py --xla-flags=--xla_cpu_use_thunk_runtime=false   # JAX's XLA flags
    LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 python benchmarks/jax_vs_tensorflow.py

Each measurement is a process of its own (`--child BACKEND CONFIG`, `KERAS_BACKEND` set before Keras is
imported), the two backends taking turns config by config and round by round, so a burst of load on a
shared machine hits both alike. A child builds the family's pretraining model (`spec.build_pretraining_model`:
MLM + NSP / SOP, dropout as configured), compiles it with AdamW and `jit_compile=True` (XLA on both
backends, float32), and runs Keras' `model.fit` on the same synthetic batches (`benchmarks.lab.throughput.
make_batch`: batch x length 128, 20 masked positions, no padding) as `tfbert pretrain --backend` does; a
callback reads the loss back after every step, so each step has finished when it is timed. Steps/s is the
median over the timed steps after the warm-up ones (the first compiles); the table keeps each backend's
best round. The goal (issue 42): JAX at least 0.9x TensorFlow.

The allocator matters on JAX: XLA's CPU runtime allocates a step's large buffers afresh, and glibc's malloc
hands blocks that size back to the system when freed, so every step faults its pages in again (bert_small:
1.26M page faults in a run on JAX against 0.48M on TensorFlow). The children inherit `LD_PRELOAD`, and the
table's setup line names the allocator; tcmalloc (Debian's libgoogle-perftools4) keeps the pages.
"""

from __future__ import annotations

import os
import sys

# The checkout, where `benchmarks.lab` (the measuring code) lives.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

from benchmarks.lab.machine import cpu_model, load_average  # noqa: E402
from benchmarks.lab.report import Table  # noqa: E402

BACKENDS = ("jax", "tensorflow")
GOAL = 0.9


def measure_here(config_name: str, batch_size: int, steps: int, warmup: int) -> dict:
    """One backend's measurement in this process (its `KERAS_BACKEND` chose the backend at import)."""
    import keras
    import numpy as np

    from benchmarks.lab.throughput import make_batch
    from tfbert.config import load_config

    config = load_config(config_name)
    keras.utils.set_random_seed(0)
    model = config.spec.build_pretraining_model(config)
    model.compile(optimizer=keras.optimizers.AdamW(1e-4), jit_compile=True)
    batch = make_batch(config.encoder.vocab_size, batch_size)
    rows = warmup + steps
    inputs = {name: np.tile(batch[name], (rows, 1)) for name in model.input}
    labels = {"masked_ids": np.tile(batch["masked_ids"], (rows, 1)),
              "masked_weights": np.tile(batch["masked_weights"], (rows, 1)),
              f"{model.pair_objective}_labels": np.tile(batch["pair_labels"], rows)}
    ends, cpu = [], []

    def step_ended(step, logs):
        float(logs["loss"])      # waits for the step
        ends.append(time.perf_counter())
        cpu.append(time.process_time())

    started, cpu_started = time.perf_counter(), time.process_time()
    model.fit(inputs, labels, batch_size=batch_size, epochs=1, shuffle=False, verbose=0,
              callbacks=[keras.callbacks.LambdaCallback(on_train_batch_end=step_ended)])
    seconds = np.diff([started, *ends])[warmup:]
    cpu_seconds = np.diff([cpu_started, *cpu])[warmup:]
    return {"steps_per_s": 1 / float(np.median(seconds)), "first_step_s": ends[0] - started,
            "cpu_per_step": float(np.median(cpu_seconds)), "keras": keras.__version__, "versions": versions()}


def versions() -> str:
    """The backend's framework and its version (`JAX 0.10.2` / `TensorFlow 2.21.0`)."""
    import keras

    if keras.backend.backend() == "jax":
        import jax

        return f"JAX {jax.__version__}"
    import tensorflow as tf

    return f"TensorFlow {tf.__version__}"


def measure_in_child(backend: str, config_name: str, args: argparse.Namespace) -> dict:
    """`measure_here` in a fresh process on `backend`."""
    environment = {**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"}
    if backend == "jax" and args.xla_flags:
        environment["XLA_FLAGS"] = " ".join([environment.get("XLA_FLAGS", ""), args.xla_flags]).strip()
    command = [sys.executable, os.path.abspath(__file__), "--child", backend, config_name,
               "--batch-size", str(args.batch_size), "--steps", str(args.steps), "--warmup", str(args.warmup)]
    done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the {backend} child for {config_name} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(args: argparse.Namespace) -> Table:
    """Every config on both backends, `args.rounds` times in turns; each backend's best round."""
    load_before = load_average()
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.rounds):
        for config_name in args.configs:
            for backend in BACKENDS:
                run = measure_in_child(backend, config_name, args)
                runs.setdefault((config_name, backend), []).append(run)
                print(f"{config_name} on {backend}: {run['steps_per_s']:.2f} steps/s, {run['cpu_per_step']:.2f} CPU-s "
                      f"a step, first step {run['first_step_s']:.1f} s", file=sys.stderr, flush=True)
    rows, ratios = [], []
    for config_name in args.configs:
        best = {backend: max(runs[config_name, backend], key=lambda run: run["steps_per_s"]) for backend in BACKENDS}
        ratio = best["jax"]["steps_per_s"] / best["tensorflow"]["steps_per_s"]
        ratios.append(ratio)
        every = {backend: ", ".join(f"{run['steps_per_s']:.2f}" for run in runs[config_name, backend])
                 for backend in BACKENDS}
        rows.append([config_name, f"{best['jax']['steps_per_s']:.2f}", f"{best['tensorflow']['steps_per_s']:.2f}",
                     f"**{ratio:.2f}x**",
                     f"{best['jax']['cpu_per_step']:.2f} / {best['tensorflow']['cpu_per_step']:.2f}",
                     f"{best['jax']['first_step_s']:.1f} / {best['tensorflow']['first_step_s']:.1f}",
                     f"{every['jax']} / {every['tensorflow']}"])
    sample = runs[args.configs[0], "jax"][0], runs[args.configs[0], "tensorflow"][0]
    setup = [f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {cpu_model()}, {os.cpu_count()} cores, "
             f"load average {load_before} before, {load_average()} after; Keras {sample[0]['keras']}, "
             f"{sample[0]['versions']}, {sample[1]['versions']}; batch {args.batch_size} x 128, 20 masked positions, "
             f"float32, AdamW, XLA on both; median of {args.steps} steps after {args.warmup} warm-up, best of "
             f"{args.rounds} alternating rounds" + (f"; JAX's XLA_FLAGS {args.xla_flags}" if args.xla_flags else "")
             + f"; malloc: {os.environ.get('LD_PRELOAD') or 'glibc'}"]
    verdict = "met" if min(ratios) >= GOAL else "not met"
    notes = [f"Goal JAX >= {GOAL}x TensorFlow: {verdict} (geometric mean "
             f"{statistics.geometric_mean(ratios):.2f}x)."]
    return Table("Masked-LM pretraining on the CPU: JAX against TensorFlow",
                 ["model", "JAX steps/s", "TensorFlow steps/s", "JAX / TF", "CPU-s per step JAX / TF",
                  "first step s JAX / TF", "every round JAX / TF"], rows, setup=setup, notes=notes,
                 align="lrrrrrr")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=["bert_small", "albert_base"])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (the first one compiles)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--xla-flags", default="", help="added to XLA_FLAGS of the JAX children")
    parser.add_argument("--child", nargs=2, metavar=("BACKEND", "CONFIG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure_here(args.child[1], args.batch_size, args.steps, args.warmup)))
        return
    print(table(args).markdown())


if __name__ == "__main__":
    main()
