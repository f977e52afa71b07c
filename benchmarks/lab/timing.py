"""Timing with alternation: contenders take turns, so a burst of load on a shared machine hits all alike.

Example:
    >>> best = alternate({"a": lambda: sum(range(1000)), "b": lambda: sum(range(10))}, rounds=2)
    >>> sorted(best), all(len(times) == 2 for times in best.values())
    (['a', 'b'], True)
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Mapping, TypeVar

Measurement = TypeVar("Measurement")


def seconds(call: Callable[[], object]) -> float:
    """Wall-clock seconds of one `call()`."""
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def wall_and_cpu(call: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and this process's CPU seconds of one `call()`."""
    start, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - start, time.process_time() - cpu


def alternate(runs: Mapping[str, Callable[[], object]], rounds: int,
              clock: Callable[[Callable[[], object]], Measurement] = seconds) -> dict[str, list[Measurement]]:
    """`clock(run)` (default: its seconds) of each run, `rounds` times, in turns (a, b, c, a, b, c, ...)."""
    times: dict[str, list] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            times[name].append(clock(run))
    return times


def measure_alternately(measures: Mapping[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each measure's result (a rate it computes itself), `rounds` times, in turns."""
    results: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            results[name].append(measure())
    return results


def time_steps(step: Callable[[], object], steps: int, warmup: int, batch_size: int) -> float:
    """Sequences per second: `batch_size` over the median of `steps` timed calls after `warmup` untimed ones."""
    for _ in range(warmup):
        step()
    return batch_size / statistics.median(seconds(step) for _ in range(steps))
