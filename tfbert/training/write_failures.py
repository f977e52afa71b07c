"""What a run's failure to write means for the user, in one line: permission denied, disk full.

TensorFlow raises `PermissionDeniedError` / `ResourceExhaustedError` from a checkpoint write and
Python raises `OSError` (EACCES, EROFS, ENOSPC) from everything else; both become a message that
names `--model-dir` and, for a full disk, the last complete checkpoint a rerun resumes from.

    >>> write_failure_message(OSError(errno.ENOSPC, "No space left on device"), "runs/a")
    'no space left on the disk of runs/a ([Errno 28] No space left on device); there is no complete checkpoint ...'
"""

from __future__ import annotations

import errno

import tensorflow as tf

from tfbert.artifacts.checkpoints import Checkpoint, newest_checkpoint

PERMISSION_ERRNOS = (errno.EACCES, errno.EPERM, errno.EROFS)
# TensorFlow's ResourceExhaustedError also means "out of memory"; only these texts mean a full disk.
DISK_FULL_TEXTS = ("no space left", "disk quota exceeded", "not enough space")


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _is_disk_full(error: BaseException) -> bool:
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(error, (tf.errors.ResourceExhaustedError, OSError)) and \
        any(text in str(error).lower() for text in DISK_FULL_TEXTS)


def _newest(model_dir: str) -> Checkpoint | None:
    try:
        return newest_checkpoint(model_dir)
    except (tf.errors.OpError, ValueError):
        return None


def last_complete_checkpoint(model_dir: str) -> str | None:
    """The path of the newest complete checkpoint in `model_dir` (either format), if any."""
    checkpoint = _newest(model_dir)
    return None if checkpoint is None else checkpoint.path


def _resume_advice(model_dir: str, fix: str = "free space") -> str:
    latest = _newest(model_dir)
    if latest is None:
        return f"there is no complete checkpoint yet: {fix} and rerun the same command"
    return (f"the last complete checkpoint is {latest.path} (step {latest.step}): {fix} and rerun the same command to "
            "resume from it")


def write_failure_message(error: BaseException, model_dir: str) -> str | None:
    """One line for a write failure under `model_dir` (None: `error` is not one)."""
    if isinstance(error, tf.errors.PermissionDeniedError) or (
            isinstance(error, OSError) and error.errno in PERMISSION_ERRNOS):
        return (f"cannot write to {model_dir}: permission denied ({_first_line(error)}); give a --model-dir you "
                "can write to")
    if _is_disk_full(error):
        return f"no space left on the disk of {model_dir} ({_first_line(error)}); {_resume_advice(model_dir)}"
    if (isinstance(error, OSError) and error.errno == errno.EFBIG) or "file too large" in str(error).lower():
        return (f"a file in {model_dir} outgrew the file-size limit, ulimit -f ({_first_line(error)}); "
                f"{_resume_advice(model_dir, 'raise the limit')}")
    return None


def run_failure_message(error: BaseException, model_dir: str) -> str:
    """One line for an error that ended a run: a write failure, running out of memory, or the error's own text."""
    message = write_failure_message(error, model_dir)
    if message is not None:
        return message
    if isinstance(error, tf.errors.ResourceExhaustedError):
        return f"out of memory ({_first_line(error)}); give a smaller --batch-size or --sequence-length"
    return str(error)
