"""Imports TensorFlow for the command line without its start-up log lines.

TensorFlow 2.21 (and 2.20, in another format) writes C++ info lines ("oneDNN custom operations are on", "Could not find cuda
drivers on your machine") to stderr while it is imported, before absl logging is set up, so
`TF_CPP_MIN_LOG_LEVEL` cannot hide them; on a machine without a GPU, listing the devices then logs
a "failed call to cuInit" error. A new user reads these as failures, and one who set
`TF_CPP_MIN_LOG_LEVEL` for later logs does not want them either. No TensorFlow or absl setting
silences the first ones, so the import (and the device listing) runs with stderr captured at the file-descriptor level
(`tfbert.native_stderr`); anything but those info and warning lines is written back, and all of it if the import fails.

    >>> import_tensorflow_quietly()   # then `import tensorflow` is silent, whatever TF_CPP_MIN_LOG_LEVEL says
"""

from __future__ import annotations

import os
import re
import sys

from tfbert.commands.gc_settings import set_aside_imported_objects
from tfbert.native_stderr import filtered_native_stderr

STARTUP_NOISE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|[IW]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [\w.]+:\d+\] .*"
    # TensorFlow 2.20's format of the same lines (and tensorflow-tpu's "Opening library" / "Libtpu path is")
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IW] [\w/.]+:\d+\] .*"
    # the second line of cpu_feature_guard's info line
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags\."
    # a machine without a GPU (tfbert info lists the devices found)
    r"|E\d{4} \d\d:\d\d:\d+\.\d+ +\d+ cuda_platform\.cc:\d+\] failed call to cuInit: .*"
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: E [\w/.]+/cuda_platform\.cc:\d+\] failed call to cuInit: .*)$"
)


def runs_as_main(module: str) -> bool:
    """Whether this process is `python -m MODULE` (as its command line says; `sys.argv` does not name the module
    while the packages above it are imported, which is where a package sees it).

    A package whose own import pulls in TensorFlow (`tfbert.data`) calls `import_tensorflow_quietly` first when it
    is imported to run one of its modules as a command: `python -m tfbert.data.service`.
    """
    command = getattr(sys, "orig_argv", [])
    return "-m" in command and command[command.index("-m") + 1:][:1] == [module]


def import_tensorflow_quietly() -> None:
    """Imports TensorFlow, holding back its start-up info and warning lines whatever TF_CPP_MIN_LOG_LEVEL says.

    Sets `TF_CPP_MIN_LOG_LEVEL=3` unless the user set it (errors that matter reach Python as exceptions);
    a user's level still decides what TensorFlow logs after the import. The objects the import made are
    then set aside from the garbage collector (`tfbert.commands.gc_settings`).
    """
    if "tensorflow" in sys.modules:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with filtered_native_stderr(STARTUP_NOISE.match):
        import tensorflow

        tensorflow.config.list_physical_devices()   # the devices' start-up lines (cuInit) come here
    set_aside_imported_objects()
