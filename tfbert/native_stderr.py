"""What C++ libraries write to stderr, held back where it is noise: `filtered_native_stderr`.

TensorFlow and TF Lite write info lines from C++ straight to file descriptor 2 (TensorFlow's start-up
lines before absl logging is set up, TF Lite's "Created ... XNNPACK delegate"), which no Python setting
reaches. The block's stderr goes to a temporary file at the file-descriptor level; at its end every line
is written back to `sys.stderr` except those `noise` matches (all of them when the block raised).

    >>> with filtered_native_stderr(lambda line: line.startswith("INFO: ")):
    ...     pass
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from typing import Callable, Iterator


@contextlib.contextmanager
def filtered_native_stderr(noise: Callable[[str], bool]) -> Iterator[None]:
    """Within the block, file descriptor 2 is captured; then its lines but `noise`'s are written back."""
    sys.stderr.flush()
    try:
        stderr_copy = os.dup(2)
    except OSError:   # no file descriptor 2 (a closed stderr): nothing to keep clean
        yield
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        failed = True
        try:
            yield
            failed = False
        finally:
            os.dup2(stderr_copy, 2)
            os.close(stderr_copy)
            captured.seek(0)
            lines = captured.read().decode("utf-8", "replace").splitlines()
            kept = [line for line in lines if failed or not noise(line)]
            if kept:
                sys.stderr.write("\n".join(kept) + "\n")
                sys.stderr.flush()
