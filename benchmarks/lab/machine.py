"""The label a recorded benchmark run carries: when, on what CPU, under what load, with which versions, how.

Example:
    >>> label = MachineLabel.now(command="python -m benchmarks tokenize")  # doctest: +SKIP
    >>> print(label.finish().markdown())  # doctest: +SKIP
    Date: 2026-11-25 09:40 UTC. Machine: AMD EPYC, 2 cores, bfloat16 instructions: none (no AVX512-BF16, no AMX); ...
"""

from __future__ import annotations

import dataclasses
import os
import platform
import time
from pathlib import Path

from benchmarks.lab import peers

def cpu_model(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """The CPU's model name (`/proc/cpuinfo`), or what `platform` knows where there is none."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, `2.51 2.34 2.21` (`unknown` where the system has none)."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def versions() -> str:
    """`tfbert 0.1.0, TensorFlow 2.21.0, Keras 3.12.0 (tensorflow backend)`, then each installed peer's version."""
    import keras
    import tensorflow as tf

    import tfbert

    found = [f"{peer} {peers.version(peer)}" for peer in peers.PEERS if peers.installed(peer)]
    absent = [peer for peer in peers.PEERS if not peers.installed(peer)]
    line = (f"tfbert {tfbert.__version__}, TensorFlow {tf.__version__}, Keras {keras.__version__} "
            f"({keras.backend.backend()} backend); peers: {', '.join(found) or 'none'}")
    return line + (f"; not installed: {', '.join(absent)}" if absent else "")


@dataclasses.dataclass
class MachineLabel:
    """Date, CPU, cores, load before and after, versions and the exact command of one benchmark run.

    Example:
        >>> label = MachineLabel("2026-11-25 09:40 UTC", "AMD EPYC", (), 2, "2.50 2.30 2.20", "tfbert 0.1.0",
        ...                      "python -m benchmarks tokenize")
        >>> label.load_after = "2.60 2.40 2.20"
        >>> print(label.markdown().splitlines()[0])
        Date: 2026-11-25 09:40 UTC. Machine: AMD EPYC, 2 cores, bfloat16 instructions: none (no AVX512-BF16, no AMX).
    """

    date: str
    cpu: str
    bf16_flags: tuple[str, ...] | None
    cores: int
    load_before: str
    versions: str
    command: str
    load_after: str = ""

    @classmethod
    def now(cls, command: str) -> MachineLabel:
        """This machine, now, before the run (call `finish()` after it)."""
        from tfbert.distribute.peaks import cpu_bf16_flags

        return cls(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), cpu_model(), cpu_bf16_flags(),
                   os.cpu_count() or 1, load_average(), versions(), command)

    def finish(self) -> MachineLabel:
        """Records the load average after the run."""
        self.load_after = load_average()
        return self

    def markdown(self) -> str:
        """The label as the lines above a recorded section's tables."""
        if self.bf16_flags is None:
            bf16 = "unknown"
        else:
            bf16 = ", ".join(self.bf16_flags) or "none (no AVX512-BF16, no AMX)"
        return (f"Date: {self.date}. Machine: {self.cpu}, {self.cores} cores, bfloat16 instructions: {bf16}.\n"
                f"Load average (1, 5, 15 min): {self.load_before} before, {self.load_after or 'unknown'} after.\n"
                f"Versions: {self.versions}.\n"
                f"Command: `{self.command}`")
