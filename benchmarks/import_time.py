"""Start-up time of `import tfbert` and `tfbert --help`, for two source trees, alternating runs.

`import tfbert` must not import Keras or TensorFlow (the Keras classes are registered lazily by
`tfbert.keras_classes`), so both stay far below the seconds a TensorFlow import takes.

    python benchmarks/import_time.py --before /work/main --after . --runs 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c 'import tfbert'": ["-c", "import tfbert"],
    "tfbert --help": ["-c", "import sys; sys.argv = ['tfbert', '--help']; from tfbert.cli import main; main()"],
}


def wall_seconds(tree: str, arguments: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *arguments], env={**os.environ, "PYTHONPATH": tree}, capture_output=True,
                   cwd="/", check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="source tree whose tfbert/ is the baseline")
    parser.add_argument("--after", required=True, help="source tree whose tfbert/ is measured against it")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    trees = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    times = {(tree, command): [] for tree in trees for command in COMMANDS}
    for _ in range(args.runs):
        for tree, root in trees.items():
            for command, arguments in COMMANDS.items():
                times[(tree, command)].append(wall_seconds(root, arguments))
    print("| command | before (median, min) | after (median, min) | after / before (medians) |")
    print("|---|---|---|---|")
    for command in COMMANDS:
        before, after = times[("before", command)], times[("after", command)]
        print(f"| {command} | {statistics.median(before):.2f} s, {min(before):.2f} s | "
              f"{statistics.median(after):.2f} s, {min(after):.2f} s | "
              f"{statistics.median(after) / statistics.median(before):.2f} |")


if __name__ == "__main__":
    main()
