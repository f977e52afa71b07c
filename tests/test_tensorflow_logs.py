"""The command line imports TensorFlow without its start-up log lines, and loses nothing else."""

import contextlib
import os
import subprocess
import sys

import pytest

from tfbert.commands.tensorflow_logs import STARTUP_NOISE
from tfbert.native_stderr import filtered_native_stderr

TENSORFLOW_STARTUP = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795311550.466609   10955 port.cc:153] oneDNN custom operations are on. You may see slightly "
    "different numerical results due to floating-point round-off errors from different computation orders.",
    "I0000 00:00:1795311550.467033   10955 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU "
    "will not be used.",
    "I0000 00:00:1795799549.421449    9988 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use "
    "available CPU instructions in performance-critical operations.",
    "To enable the following instructions: AVX2 AVX512F AVX512_VNNI AVX512_BF16 FMA, in other operations, rebuild "
    "TensorFlow with the appropriate compiler flags.",
    "E0000 00:00:1795311552.830068   10955 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed "
    "call to cuInit: UNKNOWN ERROR (303)",
    # TensorFlow 2.20 (tensorflow-tpu: the libtpu lines)
    "2026-12-02 01:04:07.351165: I tensorflow/core/util/port.cc:153] oneDNN custom operations are on. You may see "
    "slightly different numerical results due to floating-point round-off errors from different computation orders.",
    "2026-12-02 01:04:07.772423: I tensorflow/core/tpu/tpu_api_dlsym_initializer.cc:121] Libtpu path is: "
    "/venv/lib/python3.11/site-packages/libtpu/libtpu.so",
    "2026-12-02 01:04:08.043594: I tensorflow/core/platform/cpu_feature_guard.cc:210] This TensorFlow binary is "
    "optimized to use available CPU instructions in performance-critical operations.",
    "2026-12-02 01:04:09.110000: E external/local_xla/xla/stream_executor/cuda/cuda_platform.cc:51] failed call to "
    "cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
]


def test_only_startup_info_lines_are_held_back(capsys):
    other = ["E0000 00:00:1795311552.830068   10955 op_kernel.cc:1857] OP_REQUIRES failed", "a Python warning",
             "2026-12-02 01:04:10.000000: E tensorflow/core/framework/op_kernel.cc:1857] OP_REQUIRES failed"]
    assert all(STARTUP_NOISE.match(line) for line in TENSORFLOW_STARTUP)
    assert not any(STARTUP_NOISE.match(line) for line in other)
    written = ("\n".join(TENSORFLOW_STARTUP + other) + "\n").encode()
    for fails, expected in ((False, other), (True, TENSORFLOW_STARTUP + other)):   # a failed block keeps all
        with contextlib.suppress(RuntimeError), filtered_native_stderr(STARTUP_NOISE.match):
            os.write(2, written)   # as C++ writes: to file descriptor 2, not through sys.stderr
            if fails:
                raise RuntimeError("the import failed")
        assert capsys.readouterr().err.splitlines() == expected


@pytest.mark.parametrize("level", [None, "0"], ids=["unset", "set_by_the_user_to_0"])
def test_info_command_stderr_is_empty_whatever_tf_cpp_min_log_level_says(level):
    environment = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    environment.update({"TF_CPP_MIN_LOG_LEVEL": level} if level else {})
    result = subprocess.run([sys.executable, "-m", "tfbert.cli", "info"], capture_output=True, text=True,
                            env=environment, check=False)
    assert result.returncode == 0 and "strategy auto:" in result.stdout
    assert result.stderr == "", result.stderr


def test_the_program_sets_tensorflows_objects_aside_from_the_garbage_collector_once():
    script = ("import gc\n"
              "from tfbert.commands.tensorflow_logs import import_tensorflow_quietly\n"
              "import_tensorflow_quietly()\n"
              "frozen = gc.get_freeze_count()\n"
              "kept = [[object()] for _ in range(1000)]\n"
              "import_tensorflow_quietly()\n"
              "print(frozen, gc.get_freeze_count(), gc.get_threshold()[0])\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    frozen, frozen_after_a_second_call, young_threshold = map(int, result.stdout.split())
    assert frozen > 100_000, "TensorFlow's objects are frozen"
    assert frozen_after_a_second_call == frozen, "what is made after the import is never frozen"
    assert young_threshold == 50_000
