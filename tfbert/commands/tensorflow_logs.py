"""Imports TensorFlow for the command line without its start-up log lines.

TensorFlow 2.21 writes C++ info lines ("oneDNN custom operations are on", "Could not find cuda
drivers on your machine") to stderr while it is imported, before absl logging is set up, so
`TF_CPP_MIN_LOG_LEVEL` cannot hide them; on a machine without a GPU, listing the devices then logs
a "failed call to cuInit" error. A new user reads these as failures, and one who set
`TF_CPP_MIN_LOG_LEVEL` for later logs does not want them either. No TensorFlow or absl setting
silences the first ones, so the import (and the device listing) runs with stderr captured at the file-descriptor level;
anything but those info and warning lines is written back, and all of it if the import fails.

    >>> import_tensorflow_quietly()   # then `import tensorflow` is silent, whatever TF_CPP_MIN_LOG_LEVEL says
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

STARTUP_NOISE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|[IW]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [\w.]+:\d+\] .*"
    # the second line of cpu_feature_guard's info line
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags\."
    # a machine without a GPU (tfbert info lists the devices found)
    r"|E\d{4} \d\d:\d\d:\d+\.\d+ +\d+ cuda_platform\.cc:\d+\] failed call to cuInit: .*)$"
)


def import_tensorflow_quietly() -> None:
    """Imports TensorFlow, holding back its start-up info and warning lines whatever TF_CPP_MIN_LOG_LEVEL says.

    Sets `TF_CPP_MIN_LOG_LEVEL=3` unless the user set it (errors that matter reach Python as exceptions);
    a user's level still decides what TensorFlow logs after the import.
    """
    if "tensorflow" in sys.modules:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.stderr.flush()
    try:
        stderr_copy = os.dup(2)
    except OSError:  # no file descriptor 2 to capture (a closed stderr): import as it is
        import tensorflow  # noqa: F401

        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            import tensorflow

            tensorflow.config.list_physical_devices()   # the devices' start-up lines (cuInit) come here
        except BaseException:
            _restore(stderr_copy)
            _write_back(captured, keep_all=True)
            raise
        _restore(stderr_copy)
        _write_back(captured, keep_all=False)


def _restore(stderr_copy: int) -> None:
    os.dup2(stderr_copy, 2)
    os.close(stderr_copy)


def _write_back(captured, keep_all: bool) -> None:
    captured.seek(0)
    lines = captured.read().decode("utf-8", "replace").splitlines()
    kept = [line for line in lines if keep_all or not STARTUP_NOISE.match(line)]
    if kept:
        sys.stderr.write("\n".join(kept) + "\n")
        sys.stderr.flush()
